//! A sweep folder's charts and page, drawn from its files alone: `sweep.svg`
//! from `aggregate.csv`, `search.svg` from `search.csv`, and `index.html`
//! from both and `sweep.json`. `sweep`, `merge` and `search` draw them
//! after writing their tables, and `stormsim plot` from the same files, so
//! both give the same bytes.

use crate::output::write_atomically;
use crate::sweep_page::{sweep_page, SearchView};
use anyhow::{anyhow, bail, Context, Result};
use std::cmp::Ordering;
use std::path::Path;
use stormsim_plot::style::{format_counted, MAX_SERIES};
use stormsim_plot::{
    render_heatmap_svg, render_search_svg, render_sweep_lines_svg, HeatmapChart, SearchChart,
    SweepLineChart, SweepPoint, SweepSeries,
};
use stormsim_sweep::search::{replay_brackets, Probe, SEARCH_COLUMNS};
use stormsim_sweep::spec::DesignSpec;
use stormsim_sweep::stopping::Stopped;
use stormsim_sweep::{ChartSpec, Row, SweepSpec, METASTABLE_SHARE};

/// `sweep.json`: the sweep's spec, written beside its tables so that the
/// folder says what was swept and its charts and page can be drawn again.
pub const SPEC_FILE: &str = "sweep.json";
/// The sweep's chart.
pub const SWEEP_CHART: &str = "sweep.svg";
/// The search's chart.
pub const SEARCH_CHART: &str = "search.svg";
/// The folder's page.
pub const PAGE: &str = "index.html";
/// What [`draw_sweep_folder`] may write: the charts and the page.
pub const DRAWN: [&str; 4] = [
    SWEEP_CHART,
    SEARCH_CHART,
    crate::margin_cmd::MARGIN_CHART,
    PAGE,
];

/// What the sweep chart says about the sweep besides its table: its name
/// (in the title), its axes' columns and its size (in the subtitle), and
/// what it was asked to draw.
#[derive(Clone, Debug)]
pub struct SweepShape {
    /// The sweep's name.
    pub name: String,
    /// The axes' columns in `aggregate.csv`, in axis order.
    pub axes: Vec<String>,
    /// How many points.
    pub points: usize,
    /// Runs per point.
    pub replications: u32,
    /// With a stopping rule, the most a point may run (`replications` is
    /// then its first batch).
    pub replications_cap: Option<u32>,
    /// Whether the points are a grid (not a random or Latin-hypercube sample).
    pub grid: bool,
    /// The sweep file's `chart`.
    pub chart: ChartSpec,
}

/// What was drawn in a sweep folder: each chart's file name, or why it has
/// none; `None` where the folder has no table for it.
pub struct Drawn {
    /// `sweep.svg`, or why there is none.
    pub sweep: Option<std::result::Result<(), String>>,
    /// `search.svg`, or why there is none.
    pub search: Option<std::result::Result<(), String>>,
    /// `margin.svg`, or why there is none.
    pub margin: Option<std::result::Result<(), String>>,
}

impl Drawn {
    /// The names of the charts and the page drawn, in the order written.
    pub fn files(&self) -> Vec<&'static str> {
        let mut files = Vec::new();
        if matches!(self.sweep, Some(Ok(()))) {
            files.push(SWEEP_CHART);
        }
        if matches!(self.search, Some(Ok(()))) {
            files.push(SEARCH_CHART);
        }
        if matches!(self.margin, Some(Ok(()))) {
            files.push(crate::margin_cmd::MARGIN_CHART);
        }
        files.push(PAGE);
        files
    }

    /// Why a chart was not drawn, said as `no sweep.svg: WHY`; empty if
    /// every chart of the folder's tables was.
    pub fn missing(&self) -> Vec<String> {
        [
            (SWEEP_CHART, &self.sweep),
            (SEARCH_CHART, &self.search),
            (crate::margin_cmd::MARGIN_CHART, &self.margin),
        ]
        .into_iter()
        .filter_map(|(file, drawn)| match drawn {
            Some(Err(why)) => Some(format!("no {file}: {why}")),
            _ => None,
        })
        .collect()
    }
}

/// Draws the charts and the page of the sweep folder `dir` from its files
/// (`sweep.json`, and `aggregate.csv`, `search.csv` and `margin.csv` where
/// present), each
/// claimed in the folder's manifest as it is written. A chart that cannot be
/// drawn removes an earlier one of that name that stormsim drew, which would
/// otherwise pass for this sweep's; a file of the user's there stays.
pub fn draw_sweep_folder(dir: &Path) -> Result<Drawn> {
    let spec = read_spec(dir)?;
    let aggregate_path = dir.join("aggregate.csv");
    let (sweep, shape) = if aggregate_path.exists() {
        let (shape, table) = read_aggregate(&spec, &aggregate_path, dir)?;
        let drawn = sweep_chart(&shape, &table);
        write_or_remove(dir, SWEEP_CHART, &drawn)?;
        (Some(drawn.map(|_| ())), Some(shape))
    } else {
        (None, None)
    };
    let search_path = dir.join("search.csv");
    let (search, search_view) = match (&spec.search, search_path.exists()) {
        (Some(_), true) => {
            let view = read_search(&spec, &read_text(&search_path)?, &search_path)?;
            let drawn = search_chart(&spec, &view);
            write_or_remove(dir, SEARCH_CHART, &drawn)?;
            (Some(drawn.map(|_| ())), Some(view))
        }
        _ => (None, None),
    };
    let margin_path = dir.join(crate::margin_cmd::MARGIN_TABLE);
    let (margin, margin_result) = match (&spec.margin, margin_path.exists()) {
        (Some(m), true) => {
            let result = stormsim_sweep::margin::read_margin_csv(&read_text(&margin_path)?, m)
                .map_err(|why| anyhow!("{}: {why}", margin_path.display()))?;
            let chart = crate::margin_cmd::margin_chart(&spec, &result);
            let drawn = stormsim_plot::render_margin_svg(&chart).map_err(|e| e.to_string());
            write_or_remove(dir, crate::margin_cmd::MARGIN_CHART, &drawn)?;
            (Some(drawn.map(|_| ())), Some(result))
        }
        _ => (None, None),
    };
    let drawn = Drawn {
        sweep,
        search,
        margin,
    };
    let page = sweep_page(
        &spec,
        shape.as_ref(),
        search_view.as_ref(),
        margin_result.as_ref(),
        &drawn,
    );
    crate::outdir::claim(dir, &[PAGE])?;
    write_atomically(&dir.join(PAGE), page.as_bytes())?;
    Ok(drawn)
}

fn write_or_remove(
    dir: &Path,
    file: &str,
    drawn: &std::result::Result<String, String>,
) -> Result<()> {
    match drawn {
        Ok(svg) => {
            crate::outdir::claim(dir, &[file])?;
            write_atomically(&dir.join(file), svg.as_bytes())
        }
        // Only a chart stormsim drew: a file of the user's at its name stays.
        Err(_) => crate::outdir::remove_owned(dir, file),
    }
}

fn read_text(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

/// The sweep's spec, from the folder's `sweep.json`.
pub fn read_spec(dir: &Path) -> Result<SweepSpec> {
    let path = dir.join(SPEC_FILE);
    serde_json::from_str(&read_text(&path)?)
        .with_context(|| format!("{} is not a sweep's spec", path.display()))
}

/// A sweep's shape, and the columns of `aggregate.csv` its chart may draw,
/// read from the file row by row (a million points' table is half a
/// gigabyte). The name, size and chart come from the spec; the axes from the
/// table's columns between `point` and `replications` (as the sweep wrote
/// them); the points from its rows.
fn read_aggregate(spec: &SweepSpec, path: &Path, dir: &Path) -> Result<(SweepShape, Table)> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut reader = csv::Reader::from_reader(file);
    let header: Vec<String> = reader.headers()?.iter().map(str::to_string).collect();
    let axes = match (
        header.iter().position(|h| h == "point"),
        header.iter().position(|h| h == "replications"),
    ) {
        (Some(0), Some(end)) => header[1..end].to_vec(),
        _ => bail!(
            "{}/aggregate.csv does not start with point, the axes and replications",
            dir.display()
        ),
    };
    let mut shape = SweepShape {
        name: spec.name.clone(),
        axes,
        points: 0,
        replications: spec.replications,
        replications_cap: spec.stop.as_ref().map(|stop| stop.max_replications),
        grid: matches!(spec.design, DesignSpec::Grid),
        chart: spec.chart.clone().unwrap_or_default(),
    };
    let (table, records) = Table::read(reader, &chart_columns(&shape))
        .with_context(|| format!("cannot read {}", path.display()))?;
    shape.points = records;
    Ok((shape, table))
}

/// The metric a chart draws: its columns in `aggregate.csv` and how it is
/// said on the chart.
struct Metric {
    mean: String,
    low: String,
    high: String,
    label: String,
    /// A share or a rate: drawn on 0 to 1, with the 0.5 level marked.
    share: bool,
}

impl Metric {
    /// `metastable_share`, or a summary column `C` (its `C.mean`).
    fn named(name: &str) -> Metric {
        if name == METASTABLE_SHARE {
            return Metric {
                mean: name.into(),
                low: format!("{name}.ci95_low"),
                high: format!("{name}.ci95_high"),
                label: "share of replications metastable".into(),
                share: true,
            };
        }
        Metric {
            mean: format!("{name}.mean"),
            low: format!("{name}.ci95_low"),
            high: format!("{name}.ci95_high"),
            label: if name == "success_rate" {
                "success rate (mean)".into()
            } else {
                format!("{name} (mean)")
            },
            share: name.ends_with("success_rate") || name.ends_with("_share"),
        }
    }

    /// The point at `x` of a row.
    fn point(&self, table: &Table, row: &Row, x: f64) -> SweepPoint {
        SweepPoint {
            x,
            mean: table.number(row, &self.mean).unwrap_or(f64::NAN),
            ci_low: table.number(row, &self.low),
            ci_high: table.number(row, &self.high),
        }
    }
}

/// The columns of `aggregate.csv` a chart reads, by name.
struct Table {
    header: Vec<String>,
    /// Each row's cells of `header`'s columns, in one text.
    rows: Vec<Row>,
}

impl Table {
    /// Only the columns named in `keep` are kept: a table of a million
    /// points has a hundred-odd columns, most of them not drawn. With the
    /// count of records read, a row that cannot be read included.
    fn read<R: std::io::Read>(
        mut reader: csv::Reader<R>,
        keep: &[String],
    ) -> std::result::Result<(Table, usize), csv::Error> {
        let kept: Vec<usize> = (reader.headers()?.iter().enumerate())
            .filter(|(_, h)| keep.iter().any(|k| k == h))
            .map(|(i, _)| i)
            .collect();
        let pick = |r: &csv::StringRecord| Row::new(kept.iter().map(|&i| r.get(i).unwrap_or("")));
        let header = pick(reader.headers()?).iter().map(str::to_string).collect();
        let (mut rows, mut records) = (Vec::new(), 0);
        let mut record = csv::StringRecord::new();
        loop {
            match reader.read_record(&mut record) {
                Ok(true) => rows.push(pick(&record)),
                Ok(false) => break,
                // A file that cannot be read is an error; a row that is
                // not CSV is no point to draw (but counts as a point).
                Err(e) if e.is_io_error() => return Err(e),
                Err(_) => {}
            }
            records += 1;
        }
        Ok((Table { header, rows }, records))
    }

    fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    fn number(&self, row: &Row, name: &str) -> Option<f64> {
        self.column(name).and_then(|c| row[c].parse().ok())
    }

    /// Whether every row has a number in the column.
    fn all_numbers(&self, name: &str) -> bool {
        self.column(name).is_some() && self.rows.iter().all(|r| self.number(r, name).is_some())
    }
}

/// The columns of `aggregate.csv` [`sweep_chart`] may draw for `shape`:
/// the axes, the share metastable, the success rate and the chosen metric,
/// each with its interval.
fn chart_columns(shape: &SweepShape) -> Vec<String> {
    let mut metrics = vec![
        Metric::named(METASTABLE_SHARE),
        Metric::named("success_rate"),
    ];
    metrics.extend(shape.chart.metric.as_deref().map(Metric::named));
    let mut keep = shape.axes.clone();
    keep.extend(metrics.into_iter().flat_map(|m| [m.mean, m.low, m.high]));
    // A share's n, for the subtitle.
    keep.push(format!("{METASTABLE_SHARE}.n"));
    keep
}

/// The sweep's chart, from its aggregate table, or why it has none. The
/// metric is the sweep file's `chart.metric`, by default the share
/// metastable where every point has one, else the success rate. With one
/// numeric axis: lines against it (by default both the share and the success
/// rate); with two: a heatmap (phase diagram), the 0.5 boundary drawn for a
/// share; with one numeric and one categorical axis (variants): a line per
/// category. Other shapes have no chart.
fn sweep_chart(shape: &SweepShape, table: &Table) -> std::result::Result<String, String> {
    let chosen = shape.chart.metric.as_deref();
    let chosen_metric = chosen.map(Metric::named);
    let success = Metric::named("success_rate");
    let has_share = table.all_numbers(METASTABLE_SHARE);
    let metric = match chosen_metric {
        Some(m) => m,
        None if has_share => Metric::named(METASTABLE_SHARE),
        None => Metric::named("success_rate"),
    };
    if table.column(&metric.mean).is_none() {
        return Err(format!(
            "aggregate.csv has no column {} (no run had a value of {})",
            metric.mean,
            chosen.unwrap_or("success_rate")
        ));
    }
    let numeric: Vec<&String> = shape.axes.iter().filter(|a| table.all_numbers(a)).collect();
    // One numeric axis and no metric chosen: the share and the success rate.
    let two_lines = chosen.is_none() && has_share && (shape.axes.len(), numeric.len()) == (1, 1);
    let intervals = if shape.replications == 1 && metric.mean != METASTABLE_SHARE {
        // Student's t needs two values; Wilson's interval of a share does not.
        "no intervals from one replication"
    } else if two_lines {
        "95% intervals: Wilson for the share, Student-t for the success rate"
    } else if metric.mean == METASTABLE_SHARE {
        "95% Wilson intervals"
    } else {
        "95% Student-t intervals"
    };
    // A share is never shown without its n: the replications it is of.
    let judged = if metric.mean == METASTABLE_SHARE {
        let n: Vec<f64> = (table.rows.iter())
            .filter_map(|r| table.number(r, "metastable_share.n"))
            .collect();
        let (lo, hi) = n.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        });
        match n.is_empty() {
            true => String::new(),
            false if shape.replications_cap.is_some() => format!(
                "; the share of the {lo} to {hi} replications judged per point (recovered, relapsed or metastable)"
            ),
            false if lo == hi => format!(
                "; the share of the {hi} of {} replications judged (recovered, relapsed or metastable)",
                shape.replications
            ),
            false => format!(
                "; the share of the {lo} to {hi} of {} replications judged per point (recovered, relapsed or metastable)",
                shape.replications
            ),
        }
    } else {
        String::new()
    };
    let replications = match shape.replications_cap {
        Some(cap) => format!(
            "{} at first, more where unsure (up to {cap})",
            format_counted(u64::from(shape.replications), "replication")
        ),
        None => format_counted(u64::from(shape.replications), "replication"),
    };
    let subtitle = format!(
        "{} × {replications}; {intervals}{judged}",
        format_counted(shape.points as u64, "point"),
    );
    let log_y = shape.chart.log_y && !metric.share;
    let lines = |x_label: &str, series: Vec<SweepSeries>, dodge: bool| {
        render_sweep_lines_svg(&SweepLineChart {
            title: format!("{}: the sweep", shape.name),
            subtitle: subtitle.clone(),
            x_label: x_label.into(),
            y_label: if series.len() == 1 || dodge {
                metric.label.clone()
            } else {
                "share".into()
            },
            x_log: shape.chart.log_x,
            y_log: log_y,
            y_range: metric.share.then_some((0.0, 1.0)),
            threshold: (metric.mean == METASTABLE_SHARE)
                .then(|| (0.5, "half metastable".to_string())),
            series,
            dodge,
        })
        .map_err(|e| e.to_string())
    };
    let x_of = |axis: &str, row: &Row| table.number(row, axis).unwrap_or(f64::NAN);
    match (shape.axes.len(), numeric.len()) {
        (1, 1) => {
            let axis = numeric[0];
            let series_of = |m: &Metric, name: &str| SweepSeries {
                name: name.into(),
                points: table
                    .rows
                    .iter()
                    .map(|r| m.point(table, r, x_of(axis, r)))
                    .collect(),
            };
            let series = if two_lines {
                vec![
                    series_of(&metric, "share of replications metastable"),
                    series_of(&success, "success rate"),
                ]
            } else {
                vec![series_of(&metric, &metric.label)]
            };
            lines(axis, series, false)
        }
        (2, 1) => {
            let axis = numeric[0];
            let by = shape
                .axes
                .iter()
                .find(|a| *a != axis)
                .expect("two axes, one numeric");
            let by_col = table.column(by).expect("an axis's column is kept");
            let mut categories: Vec<&str> = Vec::new();
            for r in &table.rows {
                if !categories.contains(&&r[by_col]) {
                    categories.push(&r[by_col]);
                }
            }
            if categories.len() > MAX_SERIES {
                return Err(format!(
                    "{} has {} values, and a chart tells at most {MAX_SERIES} lines apart",
                    by,
                    categories.len()
                ));
            }
            let series = categories
                .iter()
                .map(|c| {
                    let points: Vec<SweepPoint> = table
                        .rows
                        .iter()
                        .filter(|r| &r[by_col] == *c)
                        .map(|r| metric.point(table, r, x_of(axis, r)))
                        .collect();
                    // A variant without the metric (another variant's
                    // service's column) has a legend entry and no line.
                    let name = if points.iter().any(|p| p.mean.is_finite()) {
                        (*c).to_string()
                    } else {
                        let name = metric.mean.strip_suffix(".mean").unwrap_or(&metric.mean);
                        format!("{c} (no {name})")
                    };
                    SweepSeries { name, points }
                })
                .collect();
            lines(axis, series, true)
        }
        (2, 2) if !shape.grid => Err(
            "the points of a sampled design form no grid to draw as a phase diagram (aggregate.csv has every point)".into(),
        ),
        (2, 2) => {
            let (xa, ya) = (numeric[0], numeric[1]);
            let distinct = |axis: &str| {
                let mut v: Vec<f64> = table.rows.iter().filter_map(|r| table.number(r, axis)).collect();
                v.sort_by(f64::total_cmp);
                v.dedup();
                v
            };
            let (xs, ys) = (distinct(xa), distinct(ya));
            let mut cells = vec![vec![None; xs.len()]; ys.len()];
            for r in &table.rows {
                let (Some(x), Some(y)) = (table.number(r, xa), table.number(r, ya)) else {
                    continue;
                };
                // The values are sorted: a binary search, not a scan per row
                // (a million points on a 1,000 × 1,000 grid). −0 equals 0.
                let at = |values: &[f64], v: f64| {
                    values
                        .binary_search_by(|w| w.partial_cmp(&v).unwrap_or(Ordering::Less))
                        .expect("a value of its axis")
                };
                let (i, j) = (at(&xs, x), at(&ys, y));
                cells[j][i] = table.number(r, &metric.mean);
            }
            render_heatmap_svg(&HeatmapChart {
                title: format!("{}: phase diagram", shape.name),
                // A cell shows a mean, not its interval: aggregate.csv has them.
                subtitle: if shape.replications == 1 {
                    format!(
                        "{} × 1 replication; each cell one run",
                        format_counted(shape.points as u64, "point")
                    )
                } else {
                    format!(
                        "{} × {}; each cell the mean of its replications (95% intervals in aggregate.csv)",
                        format_counted(shape.points as u64, "point"),
                        format_counted(u64::from(shape.replications), "replication")
                    )
                },
                x_label: xa.clone(),
                y_label: ya.clone(),
                x_values: xs,
                y_values: ys,
                x_log: shape.chart.log_x,
                y_log: false,
                cells,
                value_label: metric.label.clone(),
                value_range: if metric.share {
                    (0.0, 1.0)
                } else {
                    (f64::NAN, f64::NAN)
                },
                boundary: metric.share.then_some(0.5),
            })
            .map_err(|e| e.to_string())
        }
        (0, _) => Err("the sweep has no axes".into()),
        (n, k) => Err(format!(
            "a chart draws one numeric axis, two (a phase diagram), or one numeric and one categorical axis (a line per category); this sweep has {n} ax{} ({}), {k} of them numeric",
            if n == 1 { "is" } else { "es" },
            shape.axes.join(", ")
        )),
    }
}

/// Reads `search.csv`: the probes in the order run, and the bracket the
/// bisection held, replayed from them.
fn read_search(spec: &SweepSpec, text: &str, path: &Path) -> Result<SearchView> {
    let search = spec
        .search
        .as_ref()
        .ok_or_else(|| anyhow!("the sweep has no `search`"))?;
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers()?.iter().map(str::to_string).collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| anyhow!("{} has no column {name:?}", path.display()))
    };
    let [mean, low, high, used, left_out, why, stopped] = SEARCH_COLUMNS.map(column);
    let (mean, low, high, used, left_out, why) = (mean?, low?, high?, used?, left_out?, why?);
    // (A search written before the stopping rule has no `stopped`.)
    let stopped = stopped.ok();
    let mut view = SearchView {
        path: search.path.clone(),
        probes: Vec::new(),
        left_out: Vec::new(),
        brackets: Vec::new(),
        certain: false,
    };
    for (line, record) in reader.records().enumerate() {
        let record = record.with_context(|| format!("cannot read {}", path.display()))?;
        let cell = |c: usize| record.get(c).unwrap_or("");
        let number = |c: usize| -> Result<f64> {
            cell(c).parse().map_err(|_| {
                anyhow!(
                    "{} line {}: {} is not a number",
                    path.display(),
                    line + 2,
                    header[c]
                )
            })
        };
        let ci = match (cell(low), cell(high)) {
            ("", "") => None,
            _ => Some((number(low)?, number(high)?)),
        };
        view.probes.push(Probe {
            value: number(0)?,
            mean: number(mean)?,
            ci,
            used: number(used)? as usize,
            left_out: Vec::new(),
            stopped: stopped.map_or(Stopped::Fixed, |c| Stopped::from_name(cell(c))),
        });
        view.left_out
            .push((number(left_out)? as usize, cell(why).to_string()));
    }
    if let Some((brackets, certain)) = replay_brackets(&view.probes, search.threshold) {
        view.brackets = brackets;
        view.certain = certain;
    }
    Ok(view)
}

/// The label of a search's metric on its chart and page.
pub fn search_metric_label(metric: &str) -> String {
    if metric == "metastable" {
        "share of replications metastable".into()
    } else {
        Metric::named(metric).label
    }
}

/// The search's chart, or why it has none.
fn search_chart(spec: &SweepSpec, view: &SearchView) -> std::result::Result<String, String> {
    let search = spec.search.as_ref().ok_or("the sweep has no `search`")?;
    let share = search.metric == "metastable" || Metric::named(&search.metric).share;
    render_search_svg(&SearchChart {
        title: format!(
            "{}: where {} crosses {}",
            spec.name,
            search.metric,
            stormsim_plot::style::format_number(search.threshold)
        ),
        subtitle: format!(
            "{} × {}; {}",
            format_counted(view.probes.len() as u64, "probe"),
            format_counted(u64::from(spec.replications), "replication"),
            if search.metric == "metastable" {
                "95% Wilson intervals"
            } else if spec.replications == 1 {
                "no intervals from one replication"
            } else {
                "95% Student-t intervals"
            }
        ),
        parameter: search.path.clone(),
        metric: search_metric_label(&search.metric),
        probes: view
            .probes
            .iter()
            .map(|p| SweepPoint {
                x: p.value,
                mean: p.mean,
                ci_low: p.ci.map(|c| c.0),
                ci_high: p.ci.map(|c| c.1),
            })
            .collect(),
        threshold: search.threshold,
        brackets: view.brackets.clone(),
        certain: view.certain,
        y_range: share.then_some((0.0, 1.0)),
    })
    .map_err(|e| e.to_string())
}
