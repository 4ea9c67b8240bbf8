//! The attempt log: one record per attempt as it ends, kept in memory or
//! handed to a sink that writes it out as the run goes (`attempts.csv`).
//! Asked for per run; a run without it never builds a record.

use stormsim_engine::SimTime;

/// One attempt on the wire, for `attempts.csv`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttemptRecord {
    /// The logical request, numbered in arrival order from 0.
    pub request: u64,
    /// The callee.
    pub service: usize,
    /// For a fan-out's child, the callee's shard.
    pub shard: Option<u32>,
    /// The callee's replica (instance).
    pub replica: u32,
    /// The try it belongs to, from 1.
    pub attempt_no: u32,
    /// 0 for the try itself, `n` for its `n`-th hedge.
    pub hedge: u32,
    /// Sent.
    pub started: SimTime,
    /// Answered, timed out or cancelled.
    pub finished: SimTime,
    /// How it ended.
    pub outcome: AttemptOutcomeKind,
}

/// Where a run sends each attempt's record as the attempt ends: memory (a
/// `Vec`, for tests and small models) or a stream the caller writes out as
/// the run goes (`--attempts`), so that memory does not grow with the
/// attempts simulated. Called once per attempt, only when records were asked
/// for: a run without them never reaches it.
pub trait AttemptSink: Send {
    /// One attempt ended.
    fn record(&mut self, record: &AttemptRecord);
}

impl<S: AttemptSink + ?Sized> AttemptSink for &mut S {
    fn record(&mut self, record: &AttemptRecord) {
        (**self).record(record);
    }
}

impl AttemptSink for Vec<AttemptRecord> {
    fn record(&mut self, record: &AttemptRecord) {
        self.push(*record);
    }
}

/// How an attempt ended, as S4's telemetry names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttemptOutcomeKind {
    /// Answered with success.
    Success,
    /// Its timer expired.
    Timeout,
    /// Answered with an error.
    Error,
    /// Its caller stopped waiting (another copy won, or the call was cancelled).
    Cancelled,
}

impl AttemptOutcomeKind {
    /// The CSV spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptOutcomeKind::Success => "success",
            AttemptOutcomeKind::Timeout => "timeout",
            AttemptOutcomeKind::Error => "error",
            AttemptOutcomeKind::Cancelled => "cancelled",
        }
    }
}

/// Where a run's attempt records go.
pub(crate) enum AttemptLog<'m> {
    /// Kept for the report ([`crate::Simulator::record_attempts`]).
    Memory(Vec<AttemptRecord>),
    /// Handed on as they come ([`crate::Simulator::stream_attempts`]).
    Stream(Box<dyn AttemptSink + 'm>),
}

impl AttemptLog<'_> {
    pub(crate) fn record(&mut self, record: &AttemptRecord) {
        match self {
            AttemptLog::Memory(records) => records.record(record),
            AttemptLog::Stream(sink) => sink.record(record),
        }
    }
}
