//! `index.html`: one static page per run — the model, its variants, the summary
//! table and every chart — that opens from disk, with no server and no script.

use crate::view::RunView;
use stormsim_plot::style::format_count;

/// Escapes text for HTML.
pub(crate) fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Charts in the order a reader wants them, with a caption each.
const CHARTS: &[(&str, &str)] = &[
    (
        "timeline.svg",
        "Load, goodput and requests in flight over time, per variant",
    ),
    (
        "comparison.svg",
        "Variants compared: latency, success, amplification, wasted work",
    ),
    (
        "branches.svg",
        "Parallel steps: p50 and p99 of requests end to end beside each branch's, the slowest branch's p99 marked",
    ),
    ("load.svg", "Offered load at the focus service over time"),
    (
        "cores.svg",
        "Busy cores at the focus service over time: the work its CPU did",
    ),
    (
        "zombies.svg",
        "Zombie requests over time: tries over for their sender while work below still runs",
    ),
    (
        "wasted.svg",
        "Work done for no one, per service: wasted, cancelled and expired",
    ),
];

/// The run's `--set` overrides, said where they change what the page shows:
/// nothing for a run of the model as written.
fn overrides_html(overrides: &[String]) -> String {
    if overrides.is_empty() {
        return String::new();
    }
    let items: Vec<String> = overrides
        .iter()
        .map(|o| format!("<code>{}</code>", esc(o)))
        .collect();
    format!(
        "<p class=\"overrides\"><strong>Run with overrides</strong> (<code>--set</code>, \
         in every variant; not the model as written): {}</p>\n",
        items.join(", ")
    )
}

/// The start of every page stormsim writes, up to and with `<body>`: the
/// title (`TITLE · stormsim`) and the one style sheet of runs' and sweeps'
/// pages.
pub(crate) fn page_head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{title} · stormsim</title>\n<style>\n\
         body {{ font-family: 'DejaVu Sans', sans-serif; margin: 2em auto; padding: 0 24px; \
         max-width: 1440px; color: #222; }}\n\
         h1 {{ margin-bottom: 0.2em; }} .meta {{ color: #555; }} p, dl {{ max-width: 62em; }}\n\
         table {{ border-collapse: collapse; margin: 1em 0; font-size: 14px; }}\n\
         th, td {{ border-bottom: 1px solid #ddd; padding: 4px 10px; text-align: right; }}\n\
         tr.partial td {{ background: #fdecea; }}\n\
         th:first-child, td:first-child, th:last-child, td:last-child {{ text-align: left; }}\n\
         figure {{ margin: 2em 0; }} figure img {{ max-width: 100%; border: 1px solid #eee; }}\n\
         figcaption {{ color: #555; margin-bottom: 0.5em; }}\n\
         dt {{ font-weight: bold; margin-top: 0.6em; }}\n</style>\n</head>\n<body>\n",
        title = esc(title)
    )
}

/// A chart on a page: its caption above it, and as its text for those who
/// cannot see it.
pub(crate) fn figure(file: &str, caption: &str) -> String {
    format!(
        "<figure><figcaption>{caption}</figcaption>\
         <img src=\"{file}\" alt=\"{caption}\"></figure>\n"
    )
}

/// The tables a run's page links to, in its order; a tidy file (`.tidy.`)
/// is shown as "(tidy)" after its wide twin.
pub const TABLE_LINKS: [&str; 6] = [
    "summary.csv",
    "summary.tidy.csv",
    "summary.json",
    "timeseries.csv",
    "timeseries.tidy.csv.gz",
    "latency.csv",
];

/// The page, for the charts in `written` and the tables in `tables` (of
/// [`TABLE_LINKS`]: those the folder has).
pub fn index_html(run: &RunView, written: &[&str], tables: &[&str]) -> String {
    let mut files = String::new();
    for table in TABLE_LINKS.iter().filter(|t| tables.contains(t)) {
        if table.contains(".tidy.") {
            files.push_str(&format!(" (<a href=\"{table}\">tidy</a>)"));
        } else {
            if !files.is_empty() {
                files.push(',');
            }
            files.push_str(&format!(" <a href=\"{table}\">{table}</a>"));
        }
    }
    let mut page = page_head(&run.model);
    page.push_str(&format!(
        "<h1>{name}</h1>\n<p class=\"meta\">seed {seed} · {n} variant{s} · stormsim {version} · \
         files:{files}</p>\n\
         {overrides}<p>{description}</p>\n",
        name = esc(&run.model),
        seed = run.seed,
        n = run.variants.len(),
        s = if run.variants.len() == 1 { "" } else { "s" },
        version = env!("CARGO_PKG_VERSION"),
        description = esc(&run.description),
        overrides = overrides_html(&run.overrides),
    ));
    page.push_str("<h2>Variants</h2>\n<dl>\n");
    for v in &run.variants {
        page.push_str(&format!(
            "<dt>{}</dt><dd>{}</dd>\n",
            esc(&v.name),
            esc(&v.context.description)
        ));
    }
    page.push_str(
        "</dl>\n<h2>Summary</h2>\n<table>\n<tr><th>variant</th><th>run</th><th>requests</th>\
                   <th>succeeded</th><th>p50 ms</th><th>p99 ms</th><th>peak offered/s</th>\
                   <th>outcome</th><th>why</th></tr>\n",
    );
    let ms = |x: Option<f64>| x.map_or("—".to_string(), |x| format!("{x:.1}"));
    for v in &run.variants {
        let verdict = v.verdict.as_ref();
        page.push_str(&format!(
            "<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{} ({})</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td></tr>\n",
            if v.complete { "" } else { " class=\"partial\"" },
            esc(&v.name),
            match &v.stopped_by {
                None => "complete".to_string(),
                Some(by) => format!("<strong>PARTIAL</strong>: stopped by limits.{}", esc(by)),
            },
            // Grouped digits: 22,086,319 reads at a glance, 22086319 does not.
            format_count(v.requests),
            format_count(v.succeeded),
            v.success_rate
                .map_or("—".to_string(), |r| format!("{:.1}%", r * 100.0)),
            ms(v.p50_ms),
            ms(v.p99_ms),
            format_count(v.peak_offered_rps.round() as u64),
            verdict.map_or("—".to_string(), |r| r.outcome.as_str().replace('_', " ")),
            esc(&verdict.map_or_else(|| "—".into(), |r| r.reason.clone())),
        ));
    }
    page.push_str("</table>\n<h2>Charts</h2>\n");
    for (file, caption) in CHARTS {
        if written.contains(file) {
            page.push_str(&figure(file, caption));
        }
    }
    page.push_str("</body>\n</html>\n");
    page
}
