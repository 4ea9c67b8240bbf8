//! Resilience settings from configuration files: Envoy, Istio, resilience4j
//! and gRPC service configs, as a whole model skeleton (see [`skeleton`]).
//!
//! Each source's module reads its settings into edges (a call from the
//! caller to an upstream, with the policies the model has for them) and
//! reports every setting it does not carry as [`crate::Unmapped`], with its
//! path. Wrong input (not YAML or JSON, wrong types, negative durations) is
//! [`ImportError::Invalid`] with every problem found, never a panic.
//! `docs/import-config.md` lists what maps to what.

mod envoy;
mod grpc;
mod istio;
mod read;
mod resilience4j;
mod skeleton;
mod tree;

use crate::{ImportError, Imported, Source};
use read::Cx;
use skeleton::{Edge, Upstream};
use tree::Node;

/// The most edges a model skeleton can have: one priority class each, and a
/// model has at most 255.
const MAX_EDGES: usize = 255;

/// One input file, read.
pub(crate) struct Input {
    pub cx: Cx,
    pub docs: Vec<Node>,
}

/// The path of document `index` (from 0) of a file of `count` documents:
/// empty for a file of one, so that paths read as the file's own keys.
pub(crate) fn document_path(index: usize, count: usize) -> String {
    if count > 1 {
        format!("(document {})", index + 1)
    } else {
        String::new()
    }
}

/// Calls `each` on every document of every input, with its reading context
/// and its path ([`document_path`]).
pub(crate) fn for_each_document(inputs: &mut [Input], mut each: impl FnMut(&mut Cx, &Node, &str)) {
    for input in inputs.iter_mut() {
        let count = input.docs.len();
        for (d, doc) in input.docs.iter().enumerate() {
            each(&mut input.cx, doc, &document_path(d, count));
        }
    }
}

/// What the sources' modules find.
#[derive(Default)]
pub(crate) struct Out {
    pub upstreams: Vec<Upstream>,
    pub edges: Vec<Edge>,
    pub notes: Vec<String>,
}

/// Imports configuration files of one kind.
pub fn import(source: Source, inputs: &[(String, String)]) -> Result<Imported, ImportError> {
    let mut problems = Vec::new();
    let mut read = Vec::with_capacity(inputs.len());
    for (file, text) in inputs {
        match tree::parse_documents(file, text) {
            Ok(docs) => read.push(Input {
                cx: Cx::new(file),
                docs,
            }),
            Err(ps) => problems.extend(ps),
        }
    }
    if inputs.is_empty() {
        problems.push(crate::Problem {
            file: String::new(),
            path: String::new(),
            message: "no input files".into(),
        });
    }
    let mut out = Out::default();
    match source {
        Source::Envoy => envoy::import(&mut read, &mut out),
        Source::Istio => istio::import(&mut read, &mut out),
        Source::Resilience4j => resilience4j::import(&mut read, &mut out),
        Source::Grpc => grpc::import(&mut read, &mut out),
        Source::Otlp | Source::Jaeger => unreachable_source(&mut problems, source),
    }
    let mut unmapped = Vec::new();
    for input in read {
        problems.extend(input.cx.problems);
        unmapped.extend(input.cx.unmapped);
    }
    if out.edges.len() > MAX_EDGES {
        // Each edge is a class of its own, so that its deadline is its
        // workload's; the model has at most 255 classes.
        problems.push(crate::Problem {
            file: inputs.first().map(|(f, _)| f.clone()).unwrap_or_default(),
            path: String::new(),
            message: format!(
                "{} edges (routes, hosts, instances or methods to an upstream): a model has at most {MAX_EDGES}, one class each; import the configuration in parts",
                out.edges.len()
            ),
        });
    }
    if !problems.is_empty() {
        return Err(ImportError::Invalid(problems));
    }
    let files: Vec<String> = inputs.iter().map(|(f, _)| f.clone()).collect();
    let (model, mut notes) = skeleton::build(source, &files, &out.upstreams, &out.edges);
    notes.extend(out.notes);
    Ok(Imported {
        model,
        whole_model: true,
        unmapped,
        notes,
    })
}

/// Traces are not configuration: [`crate::import`] sends them elsewhere, and
/// a caller of this module directly is told so rather than panicking.
fn unreachable_source(problems: &mut Vec<crate::Problem>, source: Source) {
    problems.push(crate::Problem {
        file: String::new(),
        path: String::new(),
        message: format!("{source:?} input is traces, not configuration"),
    });
}

/// The problem of an input in which nothing was found to import (unless
/// problems already say why).
pub(crate) fn nothing_found(inputs: &mut [Input], out: &Out, what: &str) {
    if out.edges.is_empty() && inputs.iter().all(|i| i.cx.problems.is_empty()) {
        if let Some(input) = inputs.first_mut() {
            let file = input.cx.file.clone();
            input.cx.problems.push(crate::Problem {
                file,
                path: String::new(),
                message: format!("no {what} found"),
            });
        }
    }
}
