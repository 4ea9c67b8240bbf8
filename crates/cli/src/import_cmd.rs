//! `stormsim import`: model JSON from configuration files or traces, written
//! to a file of the user's choosing (never over one that exists, unless
//! asked) or to stdout, with what did not map on stderr.

use anyhow::{Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use stormsim_import::{ImportError, Source};

/// What `import` reads.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ImportSource {
    /// Envoy cluster and route configuration (YAML or JSON; a bootstrap, a
    /// cluster, a route configuration or a list of them).
    Envoy,
    /// Istio VirtualService and DestinationRule resources (YAML, several
    /// documents per file).
    Istio,
    /// resilience4j instances in a Spring Boot application.yml.
    Resilience4j,
    /// A gRPC service config (JSON).
    Grpc,
    /// OpenTelemetry traces as OTLP JSON (the collector's file exporter:
    /// one ExportTraceServiceRequest per line).
    Otlp,
    /// Jaeger's JSON export ({"data": [trace, ...]}).
    Jaeger,
}

impl From<ImportSource> for Source {
    fn from(s: ImportSource) -> Source {
        match s {
            ImportSource::Envoy => Source::Envoy,
            ImportSource::Istio => Source::Istio,
            ImportSource::Resilience4j => Source::Resilience4j,
            ImportSource::Grpc => Source::Grpc,
            ImportSource::Otlp => Source::Otlp,
            ImportSource::Jaeger => Source::Jaeger,
        }
    }
}

/// Runs `stormsim import`.
pub fn import(
    source: ImportSource,
    files: &[PathBuf],
    out: Option<&Path>,
    force: bool,
) -> Result<ExitCode> {
    if let Some(out) = out {
        if out.exists() && !force {
            eprintln!(
                "error: {} exists; choose another --out, or add --force to replace it",
                out.display()
            );
            return Ok(ExitCode::from(super::EXIT_BAD_INPUT));
        }
    }
    let mut inputs = Vec::with_capacity(files.len());
    for file in files {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        inputs.push((file.display().to_string(), text));
    }
    let imported = match stormsim_import::import(source.into(), &inputs) {
        Ok(imported) => imported,
        Err(ImportError::Invalid(problems)) => {
            for p in &problems {
                eprintln!("error: {}{}", located(&p.file, &p.path), p.message);
            }
            return Ok(ExitCode::from(super::EXIT_BAD_INPUT));
        }
    };
    for note in &imported.notes {
        eprintln!("{note}");
    }
    for u in &imported.unmapped {
        eprintln!(
            "warning: {}not imported: {}",
            located(&u.file, &u.path),
            u.message
        );
    }
    let mut text = serde_json::to_string_pretty(&imported.model)?;
    text.push('\n');
    match out {
        None => std::io::stdout().write_all(text.as_bytes())?,
        Some(out) => {
            let dir = match out.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            // Its mode that of a file written directly (the umask's).
            let mut tmp = stormsim_sweep::files::temp_file_in(dir)
                .with_context(|| format!("cannot write in {}", dir.display()))?;
            tmp.write_all(text.as_bytes())?;
            tmp.as_file().sync_all()?;
            // Without --force, a file that appeared since the check above
            // is not replaced either.
            let persisted = if force {
                tmp.persist(out).map(drop)
            } else {
                tmp.persist_noclobber(out).map(drop)
            };
            persisted.with_context(|| format!("cannot write {}", out.display()))?;
            let what = if imported.whole_model {
                "a model"
            } else {
                "model fragments"
            };
            eprintln!("wrote {what} to {}", out.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Where a problem or a setting that did not map is, as a message's
/// prefix: `FILE at PATH: `, or what of it is known (a summary of several
/// spans has neither: then nothing).
fn located(file: &str, path: &str) -> String {
    match (file.is_empty(), path.is_empty()) {
        (false, false) => format!("{file} at {path}: "),
        (false, true) => format!("{file}: "),
        (true, false) => format!("at {path}: "),
        (true, true) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::located;

    /// No empty "at :" where the file or the path is not known.
    #[test]
    fn a_location_says_only_what_is_known() {
        assert_eq!(located("a.yaml", "clusters[0]"), "a.yaml at clusters[0]: ");
        assert_eq!(located("a.yaml", ""), "a.yaml: ");
        assert_eq!(located("", "spans"), "at spans: ");
        assert_eq!(located("", ""), "");
    }
}
