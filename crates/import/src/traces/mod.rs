//! A model from traces: OTLP JSON and Jaeger JSON.
//!
//! Traces show what a system did with the requests it got: which service
//! called which, how often, in what order and what at once, how long each
//! spent on its own, how often each failed, and when requests came. They do
//! not show the limits the system ran within (worker pools, queues,
//! timeouts), so the model gets defaults for those that cannot be the
//! bottleneck at the observed rate, listed in the notes as assumptions.
//!
//! The steps: read the files into [`span::Span`]s ([`otlp`], [`jaeger`]);
//! cut each trace's tree into executions of services' handlers, with the
//! calls between them ([`graph`]); read each execution's calls as steps
//! (sequential, parallel, retried: [`shape`]); sum them up per service and
//! edge into a model ([`infer`]).

mod graph;
mod infer;
mod jaeger;
mod otlp;
mod shape;
mod span;
mod stats;

use crate::{ImportError, Imported, Problem, Source};

/// Imports trace files of one kind into one model.
pub fn import(source: Source, inputs: &[(String, String)]) -> Result<Imported, ImportError> {
    let mut read = span::Read::default();
    for (i, (file, text)) in inputs.iter().enumerate() {
        match source {
            Source::Jaeger => jaeger::read(i, file, text, &mut read),
            _ => otlp::read(i, file, text, &mut read),
        }
    }
    if !read.problems.is_empty() {
        return Err(ImportError::Invalid(read.problems));
    }
    let files: Vec<String> = inputs.iter().map(|(f, _)| f.clone()).collect();
    let whole_input = || Problem {
        file: files.join(", "),
        path: String::new(),
        message: String::new(),
    };
    if read.spans.is_empty() {
        return Err(ImportError::Invalid(vec![Problem {
            message: "no spans: nothing to infer a model from".into(),
            ..whole_input()
        }]));
    }
    let mut warnings = graph::Warnings::new(&files);
    let forest = graph::build(&read.spans, &mut warnings);
    let mut unmapped = read.unmapped;
    unmapped.extend(warnings.finish());
    if forest.roots.is_empty() {
        let mut problems = vec![Problem {
            message: format!(
                "no whole trace: none of the {} spans is a root (a span without a parent), so no request can be followed from its start",
                read.spans.len()
            ),
            ..whole_input()
        }];
        // Why each span was left out, as the problems' evidence.
        problems.extend(unmapped.into_iter().map(|u| Problem {
            file: u.file,
            path: u.path,
            message: u.message,
        }));
        return Err(ImportError::Invalid(problems));
    }
    let inferred = infer::infer(&forest, &model_name(&files), read.spans.len());
    unmapped.extend(inferred.unmapped);
    let mut notes = inferred.notes;
    let (cut, first) = &forest.cut_to_parent;
    if *cut > 0 {
        notes.push(format!(
            "{cut} span(s) lay partly outside their parent span, kept and cut to the parent's interval for its own time: a caller that gave up before its callee finished (a timeout), work the parent did not wait for, or clocks that differ between hosts (the first: {first})"
        ));
    }
    Ok(Imported {
        model: inferred.model,
        whole_model: true,
        unmapped,
        notes,
    })
}

/// The model's name: the first file's name without folders and extensions
/// (`traces.otlp.jsonl` → `traces`), a name `stormsim run` can make a folder
/// of; `traces` if nothing of it is left.
fn model_name(files: &[String]) -> String {
    let stem = files
        .first()
        .map(|f| {
            let base = f.rsplit(['/', '\\']).next().unwrap_or(f);
            base.split('.').next().unwrap_or("").to_string()
        })
        .unwrap_or_default();
    // At most 100 bytes: the model's name is a folder's, of at most 200.
    let mut clean = String::new();
    for c in stem
        .chars()
        .filter(|c| !c.is_control() && !matches!(c, '/' | '\\'))
    {
        if clean.len() + c.len_utf8() > 100 {
            break;
        }
        clean.push(c);
    }
    if clean.trim().is_empty() {
        "traces".into()
    } else {
        clean
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regression_model_name_of_a_file_name_in_four_byte_characters() {
        // 100 characters of 4 bytes made a 400-byte name: the model's names
        // are folders' and take at most 200 bytes.
        let name = model_name(&[format!("{}.otlp.json", "𝄞".repeat(150))]);
        assert_eq!(name, "𝄞".repeat(25));
        assert_eq!(model_name(&["a/b/shop.otlp.jsonl".into()]), "shop");
    }
}
