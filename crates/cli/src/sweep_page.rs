//! `index.html` of a sweep's folder: what was swept (or searched), the
//! charts, the headline result and links to every table — a page that
//! opens from disk, in the style of a run's.

use crate::report_html::{esc, figure, page_head};
use crate::sweep_charts::{
    search_metric_label, Drawn, SweepShape, PAGE, SEARCH_CHART, SPEC_FILE, SWEEP_CHART,
};
use serde_json::Value;
use stormsim_plot::style::{format_count, format_counted};
use stormsim_sweep::margin::MarginResult;
use stormsim_sweep::search::Probe;
use stormsim_sweep::spec::{AxisSpec, DesignSpec, Scale};
use stormsim_sweep::stopping::Stopped;
use stormsim_sweep::{ModelSource, SweepSpec};

/// A search as its folder holds it: the probes of `search.csv` in the order
/// run, and the bisection's brackets replayed from them.
pub struct SearchView {
    /// The parameter searched.
    pub path: String,
    /// The probes (their `left_out` is in [`SearchView::left_out`]).
    pub probes: Vec<Probe>,
    /// Per probe, the replications left out and why, as `search.csv` says.
    pub left_out: Vec<(usize, String)>,
    /// The bracket after each probe from the second.
    pub brackets: Vec<(f64, f64)>,
    /// Whether both ends of the final bracket are beyond their intervals.
    pub certain: bool,
}

/// Most values of an axis listed on the page; longer lists show their
/// first and last few.
const LISTED_VALUES: usize = 12;

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), exact),
        other => other.to_string(),
    }
}

/// A number as the sweep file wrote it (60.25, not the chart's rounded
/// 60.2), whole numbers with grouped digits.
fn exact(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        let grouped = format_count(v.abs() as u64);
        if v < 0.0 {
            format!("-{grouped}")
        } else {
            grouped
        }
    } else {
        v.to_string()
    }
}

/// The values an axis takes, as its spec gives them.
fn axis_values(axis: &AxisSpec) -> String {
    let list = |values: Vec<String>| {
        if values.len() <= LISTED_VALUES {
            values.join(", ")
        } else {
            format!(
                "{}, …, {} ({} values)",
                values[..4].join(", "),
                values[values.len() - 2..].join(", "),
                values.len()
            )
        }
    };
    let whole = if axis.integer { ", whole numbers" } else { "" };
    if let Some(values) = &axis.values {
        list(values.iter().map(value_text).collect())
    } else if let Some(variants) = &axis.variants {
        format!("the variants {}", list(variants.clone()))
    } else if let Some(r) = &axis.linear {
        format!(
            "{} to {}, {} evenly spaced{whole}",
            exact(r.from),
            exact(r.to),
            r.steps
        )
    } else if let Some(r) = &axis.log {
        format!(
            "{} to {}, {} log-spaced{whole}",
            exact(r.from),
            exact(r.to),
            r.steps
        )
    } else if let Some(r) = &axis.range {
        format!(
            "sampled from {} to {}{}{whole}",
            exact(r.from),
            exact(r.to),
            if r.scale == Scale::Log {
                ", log-uniform"
            } else {
                ""
            }
        )
    } else {
        String::new()
    }
}

fn link(file: &str) -> String {
    format!("<a href=\"{file}\">{file}</a>")
}

/// "3 replications", "1 replication".
fn replications(n: u32) -> String {
    format_counted(u64::from(n), "replication")
}

/// The page of a sweep folder holding `spec`'s sweep (`shape`, with its
/// `aggregate.csv`) and/or its search (`search`), with the charts `drawn`.
pub fn sweep_page(
    spec: &SweepSpec,
    shape: Option<&SweepShape>,
    search: Option<&SearchView>,
    margin: Option<&MarginResult>,
    drawn: &Drawn,
) -> String {
    let mut page = page_head(&spec.name);
    let mut files = Vec::new();
    if shape.is_some() {
        files.extend(["results.csv", "aggregate.csv"]);
    }
    if search.is_some() {
        files.push("search.csv");
    }
    if margin.is_some() {
        files.extend([
            crate::margin_cmd::MARGIN_TABLE,
            crate::margin_cmd::MARGIN_PROBES,
        ]);
    }
    files.push(SPEC_FILE);
    files.extend(drawn.files().into_iter().filter(|f| *f != PAGE));
    let model = match &spec.model {
        ModelSource::File(file) => format!("<code>{}</code>", esc(file)),
        ModelSource::Inline(_) => "its inline model".into(),
    };
    let what = match (shape, search) {
        _ if margin.is_some() => format!(
            "storm margin of {model}, {} per probe's first look",
            replications(spec.replications)
        ),
        (Some(s), Some(_)) => format!(
            "sweep of {model}, {} points × {}, and a search",
            format_count(s.points as u64),
            replications(spec.replications)
        ),
        (Some(s), None) if spec.stop.is_some() => format!(
            "sweep of {model}: {} points × {} at first, more where a point was unsure (up to {})",
            format_count(s.points as u64),
            replications(spec.replications),
            spec.stop.as_ref().map_or(0, |stop| stop.max_replications)
        ),
        (Some(s), None) => format!(
            "sweep of {model}: {} points × {} = {} runs",
            format_count(s.points as u64),
            replications(spec.replications),
            format_count(s.points as u64 * u64::from(spec.replications))
        ),
        _ => format!(
            "tipping-point search in {model}, {} per probe",
            replications(spec.replications)
        ),
    };
    page.push_str(&format!(
        "<h1>{}</h1>\n<p class=\"meta\">{what} · stormsim {} · files: {}</p>\n<p>{}</p>\n",
        esc(&spec.name),
        env!("CARGO_PKG_VERSION"),
        files.iter().map(|f| link(f)).collect::<Vec<_>>().join(", "),
        esc(&spec.description),
    ));
    page.push_str(&setup_html(spec));
    if let Some(shape) = shape {
        page.push_str(&sweep_html(spec, shape, drawn));
    }
    if let Some(search) = search {
        page.push_str(&search_html(spec, search, drawn));
    }
    if let Some(margin) = margin {
        page.push_str(&margin_html(margin, drawn));
    }
    page.push_str("</body>\n</html>\n");
    page
}

/// What every run of the sweep shares: variant, seeds, overrides.
fn setup_html(spec: &SweepSpec) -> String {
    let mut items = Vec::new();
    if let Some(v) = &spec.variant {
        items.push(format!("the model's variant <code>{}</code>", esc(v)));
    }
    items.push(match (spec.seed, spec.independent_seeds) {
        (_, true) => "a seed of its own for every run".to_string(),
        (Some(seed), false) => format!(
            "replication <var>r</var> with seed {seed} + <var>r</var> at every point (common random numbers)"
        ),
        (None, false) => "replication <var>r</var> with the model's seed + <var>r</var> at every point (common random numbers)".to_string(),
    });
    if !spec.set.is_empty() {
        let set: Vec<String> = spec
            .set
            .iter()
            .map(|(path, v)| format!("<code>{}={}</code>", esc(path), esc(&v.to_string())))
            .collect();
        items.push(format!("overrides at every run: {}", set.join(", ")));
    }
    format!("<p>Runs: {}.</p>\n", items.join("; "))
}

fn sweep_html(spec: &SweepSpec, shape: &SweepShape, drawn: &Drawn) -> String {
    let design = match spec.design {
        DesignSpec::Grid => "every combination of the axes' values (a grid)".to_string(),
        DesignSpec::Random { points } => {
            format!(
                "{} points sampled at random",
                format_count(u64::from(points))
            )
        }
        DesignSpec::LatinHypercube { points } => format!(
            "{} points of a Latin hypercube",
            format_count(u64::from(points))
        ),
    };
    let mut html = format!(
        "<h2>What was swept</h2>\n<p>Points: {design}, each run {}.</p>\n<table>\n\
         <tr><th>axis (column)</th><th>parameter</th><th>values</th></tr>\n",
        replications(spec.replications)
    );
    for axis in &spec.axes {
        let column = stormsim_sweep::design::column(axis);
        let path = axis
            .path
            .as_deref()
            .map_or("the model's variant".to_string(), |p| {
                format!("<code>{}</code>", esc(p))
            });
        let zip = axis.zip.as_deref().map_or(String::new(), |z| {
            format!(" (moves with zip group <code>{}</code>)", esc(z))
        });
        html.push_str(&format!(
            "<tr><td>{}</td><td>{path}{zip}</td><td>{}</td></tr>\n",
            esc(&column),
            esc(&axis_values(axis))
        ));
    }
    html.push_str("</table>\n<h2>Results</h2>\n");
    html.push_str(&format!(
        "<p>{} (one row per run: the axes, then every column of a run's summary.csv) and {} \
         (per point: the outcomes, the share metastable and the mean and 95% interval of every \
         numeric column), over {} points.</p>\n",
        link("results.csv"),
        link("aggregate.csv"),
        format_count(shape.points as u64)
    ));
    match &drawn.sweep {
        Some(Ok(())) => {
            let caption = match &shape.chart.metric {
                Some(metric) => format!("The sweep's chart: {}", esc(metric)),
                None => "The sweep's chart".to_string(),
            };
            html.push_str(&figure(SWEEP_CHART, &caption));
        }
        Some(Err(why)) => html.push_str(&format!(
            "<p><strong>No chart</strong>: {}.</p>\n",
            esc(why)
        )),
        None => {}
    }
    html
}

/// The margin's section: its chart, then one sentence per variant, load
/// and level.
fn margin_html(margin: &MarginResult, drawn: &Drawn) -> String {
    let mut html = String::from(
        "<h2>Storm margin</h2>\n<p>At each load, the trigger size at which the share of \
         runs that end metastable crosses each level, bisected with replications that stop \
         once sure of the side; an interval runs from the largest size surely below the level \
         to the smallest surely above it (\"or beyond\": no probe was sure there, the range's \
         end stands in).</p>\n",
    );
    match &drawn.margin {
        Some(Ok(())) => html.push_str(&figure(
            crate::margin_cmd::MARGIN_CHART,
            "The critical trigger size at each load, per variant",
        )),
        Some(Err(why)) => html.push_str(&format!(
            "<p><strong>No chart</strong>: {}.</p>\n",
            esc(why)
        )),
        None => {}
    }
    html.push_str("<ul>\n");
    for r in &margin.rows {
        html.push_str(&format!(
            "<li>{}</li>\n",
            esc(&stormsim_sweep::margin::sentence(margin, r))
        ));
    }
    html.push_str("</ul>\n");
    html
}

fn search_html(spec: &SweepSpec, view: &SearchView, drawn: &Drawn) -> String {
    let Some(search) = &spec.search else {
        return String::new();
    };
    let mut html = format!(
        "<h2>Tipping-point search</h2>\n<p>Bisection of <code>{path}</code> between {from} and \
         {to}{integer} for where {metric} crosses {threshold}, to a bracket at most {tolerance} \
         wide; each probe the mean of {reps}.</p>\n",
        path = esc(&search.path),
        from = exact(search.from),
        to = exact(search.to),
        integer = if search.integer {
            " (whole numbers)"
        } else {
            ""
        },
        metric = esc(&search_metric_label(&search.metric)),
        threshold = exact(search.threshold),
        tolerance = exact(search.tolerance),
        reps = match search.stop {
            Some(stop) => format!(
                "{} at first, then more while its interval straddles the threshold, up to {}",
                replications(spec.replications),
                stop.max_replications
            ),
            None => replications(spec.replications),
        },
    );
    match view.brackets.last() {
        Some((lo, hi)) => html.push_str(&format!(
            "<p><strong>{} crosses {} between {} = {} and {}</strong>{}.</p>\n",
            esc(&search.metric),
            exact(search.threshold),
            esc(&view.path),
            exact(*lo),
            exact(*hi),
            if view.certain {
                " (both ends beyond their 95% intervals)"
            } else {
                " (uncertain: an end's 95% interval straddles the threshold; more replications would settle it)"
            }
        )),
        None => html.push_str("<p><strong>No bracket</strong>: the probes do not hold the crossing between them.</p>\n"),
    }
    match &drawn.search {
        Some(Ok(())) => html.push_str(&figure(
            SEARCH_CHART,
            "The probes in the order run, and the bracket each left",
        )),
        Some(Err(why)) => html.push_str(&format!(
            "<p><strong>No chart</strong>: {}.</p>\n",
            esc(why)
        )),
        None => {}
    }
    html.push_str(&format!(
        "<table>\n<tr><th>probe</th><th>{}</th><th>mean</th><th>95% interval</th>\
         <th>bracket after it</th><th>replications used</th><th>left out</th></tr>\n",
        esc(&view.path)
    ));
    for (k, p) in view.probes.iter().enumerate() {
        let bracket = k
            .checked_sub(1)
            .and_then(|i| view.brackets.get(i))
            .map_or("—".to_string(), |(a, b)| {
                format!("{} to {}", exact(*a), exact(*b))
            });
        let (n, why) = view.left_out.get(k).cloned().unwrap_or_default();
        html.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{:.3}</td><td>{}</td><td>{bracket}</td><td>{}</td><td>{}</td></tr>\n",
            k + 1,
            exact(p.value),
            p.mean,
            p.ci.map_or("—".to_string(), |(lo, hi)| format!("{lo:.3} to {hi:.3}")),
            match p.stopped {
                // Stopped by the rule: say why beside the count.
                Stopped::Fixed => p.used.to_string(),
                Stopped::Sure => format!("{} (then sure of the side)", p.used),
                Stopped::Precise => format!("{} (then precise enough)", p.used),
                Stopped::Cap => format!("{} (the cap, still unsure)", p.used),
            },
            if n == 0 {
                "none".to_string()
            } else {
                esc(&format!("{n}: {why}"))
            }
        ));
    }
    html.push_str("</table>\n");
    html
}
