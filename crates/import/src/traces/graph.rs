//! From spans to executions: each trace's span tree is cut where it crosses
//! from one service into another. The piece of the tree inside one service
//! is one execution of that service's handler (its entry span, the internal
//! and CLIENT spans under it); each crossing is a call from the caller's
//! execution to the callee's.
//!
//! A span is left out (with a warning) when it cannot be placed in a whole
//! tree: its parent is not in the input (a trace cut by sampling, a service
//! that does not export), its parent chain loops, or its id repeats one
//! already read.

use super::span::{Kind, Span};
use crate::Unmapped;
use std::collections::{BTreeMap, HashMap};

/// Warnings of one kind beyond this many are counted, not listed.
const WARNINGS_PER_REASON: usize = 10;

/// One execution of a service's handler.
#[derive(Clone, Debug)]
pub(crate) struct Exec {
    pub service: usize,
    /// The kind of its entry span.
    pub kind: Kind,
    /// Its entry span's interval, on its host's clock.
    pub start_ns: u64,
    pub end_ns: u64,
    /// Its entry span says it failed.
    pub error: bool,
    /// The execution that called it (`None`: a trace's root).
    pub caller: Option<usize>,
    /// Its calls out, in the order their spans were read.
    pub calls: Vec<Call>,
}

impl Exec {
    pub(crate) fn duration_ns(&self) -> u64 {
        self.end_ns - self.start_ns
    }
}

/// A call from one execution to another service's.
#[derive(Clone, Debug)]
pub(crate) struct Call {
    /// The callee's service.
    pub callee: usize,
    /// The call's interval as the caller saw it: its CLIENT span when it has
    /// one, else the callee's span; inside the caller's span either way.
    pub start_ns: u64,
    pub end_ns: u64,
    /// The callee's span, or the CLIENT span, says it failed.
    pub error: bool,
    /// The CLIENT span's duration less the callee's SERVER span's: the
    /// network both ways (and the client library's own time).
    pub network_ns: Option<u64>,
}

/// Every execution of the input, and what was left out.
#[derive(Debug, Default)]
pub(crate) struct Forest {
    /// Service names, in order of first appearance.
    pub services: Vec<String>,
    pub execs: Vec<Exec>,
    /// Root executions (one per request), in order of appearance.
    pub roots: Vec<usize>,
    /// Spans placed in executions.
    pub spans_used: usize,
    /// Traces with at least one root.
    pub traces_used: usize,
    /// Spans left out, by reason.
    pub left_out: BTreeMap<&'static str, usize>,
    /// Spans that lay partly outside their parent span, kept and cut to its
    /// interval, and where the first one is.
    pub cut_to_parent: (usize, String),
}

/// Collects warnings, at most [`WARNINGS_PER_REASON`] of each reason listed.
pub(crate) struct Warnings<'a> {
    files: &'a [String],
    listed: Vec<Unmapped>,
    counts: BTreeMap<&'static str, (usize, usize)>,
}

impl<'a> Warnings<'a> {
    pub(crate) fn new(files: &'a [String]) -> Self {
        Warnings {
            files,
            listed: Vec::new(),
            counts: BTreeMap::new(),
        }
    }

    /// The name of the file `span` was read from.
    pub(crate) fn file_of(&self, span: &Span) -> &str {
        self.files.get(span.file).map_or("", String::as_str)
    }

    /// Records a warning about `span` (at `field` of it, if given).
    pub(crate) fn add(&mut self, reason: &'static str, span: &Span, field: &str, message: String) {
        let order = self.counts.len();
        let (_, n) = self.counts.entry(reason).or_insert((order, 0));
        *n += 1;
        if *n <= WARNINGS_PER_REASON {
            let path = if field.is_empty() {
                span.path.clone()
            } else {
                format!("{}.{field}", span.path)
            };
            self.listed.push(Unmapped {
                file: self.files.get(span.file).cloned().unwrap_or_default(),
                path,
                message,
            });
        }
    }

    /// The warnings, with one line per reason that had more than were listed.
    pub(crate) fn finish(self) -> Vec<Unmapped> {
        let mut out = self.listed;
        let mut over: Vec<_> = self
            .counts
            .into_iter()
            .filter(|(_, (_, n))| *n > WARNINGS_PER_REASON)
            .collect();
        over.sort_by_key(|(_, (order, _))| *order);
        for (reason, (_, n)) in over {
            out.push(Unmapped {
                file: String::new(),
                path: String::new(),
                message: format!(
                    "{} more spans: {reason} (the first {WARNINGS_PER_REASON} are listed above)",
                    n - WARNINGS_PER_REASON
                ),
            });
        }
        out
    }
}

const ORPHAN: &str = "parent not in the input";
const OUTSIDE: &str = "parent not in the input, taken as a root";
const ORPHAN_CHILD: &str = "under a span whose parent is not in the input";
const LOOP: &str = "parent chain loops";
const DUPLICATE: &str = "span id repeated in its trace";
const ASYNC: &str = "asynchronous (PRODUCER/CONSUMER) call read as a synchronous one";

/// Builds the executions of `spans`.
pub(crate) fn build(spans: &[Span], warn: &mut Warnings) -> Forest {
    let mut forest = Forest::default();
    let mut service_index: HashMap<&str, usize> = HashMap::new();
    let service_of: Vec<usize> = spans
        .iter()
        .map(|s| {
            let next = service_index.len();
            let i = *service_index.entry(s.service.as_str()).or_insert(next);
            if i == next {
                forest.services.push(s.service.clone());
            }
            i
        })
        .collect();

    // Spans by trace, traces in order of appearance.
    let mut trace_index: HashMap<&str, usize> = HashMap::new();
    let mut traces: Vec<Vec<usize>> = Vec::new();
    for (i, s) in spans.iter().enumerate() {
        let next = traces.len();
        let t = *trace_index.entry(s.trace.as_str()).or_insert(next);
        if t == next {
            traces.push(Vec::new());
        }
        traces[t].push(i);
    }

    let mut children: Vec<Vec<usize>> = vec![Vec::new(); spans.len()];
    let mut placed = vec![false; spans.len()];
    for members in &traces {
        let mut by_id: HashMap<&str, usize> = HashMap::new();
        let mut kept = Vec::with_capacity(members.len());
        for &i in members {
            if let Some(&first) = by_id.get(spans[i].id.as_str()) {
                warn.add(
                    DUPLICATE,
                    &spans[i],
                    "",
                    format!(
                        "span id {} was read already ({}): this copy is left out",
                        spans[i].id, spans[first].path
                    ),
                );
                *forest.left_out.entry(DUPLICATE).or_default() += 1;
                placed[i] = true;
                continue;
            }
            by_id.insert(spans[i].id.as_str(), i);
            kept.push(i);
        }
        let mut roots = Vec::new();
        let mut orphans = Vec::new();
        for &i in &kept {
            match &spans[i].parent {
                None => roots.push(i),
                Some(p) => match by_id.get(p.as_str()) {
                    Some(&parent) if parent != i => children[parent].push(i),
                    // Its own parent: the loop check below reports it.
                    Some(_) => {}
                    None => orphans.push(i),
                },
            }
        }
        // A trace without a root whose top spans name a parent that is not
        // in the input was called from outside the traces (an uninstrumented
        // client or proxy that passes the trace context on): those spans,
        // children of the earliest one's missing parent, are its roots.
        if roots.is_empty() {
            let first = orphans
                .iter()
                .min_by_key(|&&o| (spans[o].start_ns, o))
                .and_then(|&o| spans[o].parent.clone());
            orphans.retain(|&o| {
                let top = spans[o].parent == first;
                if top {
                    warn.add(
                        OUTSIDE,
                        &spans[o],
                        "",
                        format!(
                            "its parent span {} is not in the input, and its trace has no root: it is taken as a root (its caller is not traced)",
                            first.as_deref().unwrap_or("")
                        ),
                    );
                    roots.push(o);
                }
                !top
            });
        }
        if !roots.is_empty() {
            forest.traces_used += 1;
        }
        for &r in &roots {
            place_tree(
                r,
                spans,
                &service_of,
                &children,
                &mut placed,
                &mut forest,
                warn,
            );
        }
        for &o in &orphans {
            let below = mark_subtree(o, &children, &mut placed) - 1;
            let parent = spans[o].parent.as_deref().unwrap_or("");
            warn.add(
                ORPHAN,
                &spans[o],
                "",
                format!(
                    "its parent span {parent} is not in the input (a trace cut short; its root is elsewhere): it and the {below} span(s) under it are left out"
                ),
            );
            *forest.left_out.entry(ORPHAN).or_default() += 1;
            if below > 0 {
                *forest.left_out.entry(ORPHAN_CHILD).or_default() += below;
            }
        }
        for &i in &kept {
            if !placed[i] {
                warn.add(
                    LOOP,
                    &spans[i],
                    "",
                    "its chain of parents loops back to it: left out".into(),
                );
                *forest.left_out.entry(LOOP).or_default() += 1;
                placed[i] = true;
            }
        }
    }
    forest
}

/// Marks `root` and everything under it; how many spans that is.
fn mark_subtree(root: usize, children: &[Vec<usize>], placed: &mut [bool]) -> usize {
    let mut stack = vec![root];
    let mut n = 0;
    while let Some(i) = stack.pop() {
        if placed[i] {
            continue;
        }
        placed[i] = true;
        n += 1;
        stack.extend(children[i].iter().copied());
    }
    n
}

/// Cuts the tree under `root` into executions.
fn place_tree(
    root: usize,
    spans: &[Span],
    service_of: &[usize],
    children: &[Vec<usize>],
    placed: &mut [bool],
    forest: &mut Forest,
    warn: &mut Warnings,
) {
    let new_exec = |forest: &mut Forest, s: usize, caller: Option<usize>| {
        forest.execs.push(Exec {
            service: service_of[s],
            kind: spans[s].kind,
            start_ns: spans[s].start_ns,
            end_ns: spans[s].end_ns,
            error: spans[s].error,
            caller,
            calls: Vec::new(),
        });
        forest.execs.len() - 1
    };
    let e = new_exec(forest, root, None);
    forest.roots.push(e);
    // (span, its execution), depth first in the order spans were read.
    let mut stack = vec![(root, e)];
    while let Some((s, e)) = stack.pop() {
        placed[s] = true;
        forest.spans_used += 1;
        let crossing = children[s]
            .iter()
            .filter(|&&c| service_of[c] != service_of[s])
            .count();
        for &c in children[s].iter().rev() {
            let (parent, child) = (&spans[s], &spans[c]);
            if child.start_ns < parent.start_ns || child.end_ns > parent.end_ns {
                // Kept, and cut to its parent's interval for the parent's own
                // time: a caller that gave up before its callee finished (a
                // timeout) leaves one of these per attempt, so they are
                // counted in a note, not warned about one by one.
                let cut = &mut forest.cut_to_parent;
                cut.0 += 1;
                if cut.1.is_empty() {
                    cut.1 = format!("{} at {}", warn.file_of(child), child.path);
                }
            }
            if service_of[c] == service_of[s] {
                stack.push((c, e));
                continue;
            }
            if matches!(child.kind, Kind::Consumer | Kind::Producer) {
                warn.add(
                    ASYNC,
                    child,
                    "",
                    format!(
                        "{} is called through a queue (span kind {:?}); the model calls it and waits for it",
                        child.service, child.kind
                    ),
                );
            }
            let callee = new_exec(forest, c, Some(e));
            let through_client = parent.kind == Kind::Client && crossing == 1;
            let (start, end) = if through_client {
                (parent.start_ns, parent.end_ns)
            } else {
                (
                    child.start_ns.max(parent.start_ns),
                    child.end_ns.min(parent.end_ns),
                )
            };
            let caller = &forest.execs[e];
            let (start, end) = (
                start.clamp(caller.start_ns, caller.end_ns),
                end.clamp(caller.start_ns, caller.end_ns),
            );
            let call = Call {
                callee: service_of[c],
                start_ns: start,
                end_ns: end.max(start),
                error: child.error || (through_client && parent.error),
                network_ns: through_client
                    .then(|| parent.duration_ns().checked_sub(child.duration_ns()))
                    .flatten(),
            };
            forest.execs[e].calls.push(call);
            stack.push((c, callee));
        }
    }
}

/// The length of the union of intervals.
pub(crate) fn union_ns(intervals: impl Iterator<Item = (u64, u64)>) -> u64 {
    let mut v: Vec<(u64, u64)> = intervals.filter(|(s, e)| e > s).collect();
    v.sort_unstable();
    let mut total = 0;
    let mut current: Option<(u64, u64)> = None;
    for (s, e) in v {
        current = match current {
            Some((cs, ce)) if s <= ce => Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                Some((s, e))
            }
            None => Some((s, e)),
        };
    }
    total + current.map_or(0, |(s, e)| e - s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_of_overlapping_intervals_counts_overlap_once() {
        assert_eq!(union_ns([(0, 10), (5, 15), (20, 25)].into_iter()), 20);
        assert_eq!(union_ns([(0, 10), (2, 3)].into_iter()), 10);
        assert_eq!(union_ns(std::iter::empty()), 0);
        assert_eq!(union_ns([(5, 5)].into_iter()), 0);
    }
}
