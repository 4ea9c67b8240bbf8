//! The pending-event queue.
//!
//! Events are delivered in `(time, sequence)` order: ties at one instant break
//! by insertion order, so the same inputs give the same order everywhere.
//!
//! Timers are cancellable in O(1): a cancellable entry names a slot whose
//! generation is bumped on cancel; a popped entry whose generation no longer
//! matches is stale and skipped (a tombstone, as in nexosim and the reference
//! `rust-limit` loop). The hottest timers (timeouts, backoffs, arrivals) are
//! owned instead, below: no slot at all.
//!
//! **Owned timers.** Most timers belong to one entity and die with it: an
//! attempt's timeout is void once the attempt is answered, a retry's backoff
//! once its call is gone. Such a timer needs no slot of its own: it is
//! scheduled *owned* ([`EventQueue::schedule_owned`]), and when it reaches the
//! front the run loop's predicate ([`EventQueue::pop_with`]) asks its owner
//! whether it still stands; if not, it is skipped exactly as a cancelled
//! timer is (not delivered, the clock not moved). Cancelling is then a write
//! to the owner the handler makes anyway, and the pop reads the owner, which
//! its handler reads next, instead of a generation scattered over as many
//! slots as timers pending.
//!
//! **Lanes.** Most events of a resilience model come after a *constant* delay:
//! a 1 s timeout, a 500 ms backoff, a 0.5 ms network hop. Events scheduled with
//! the same constant delay become due in the order they were scheduled, so each
//! such delay gets a FIFO lane instead of the binary heap: O(1) push and pop,
//! and the heap stays small. `pop` takes the smallest `(time, sequence)` among
//! the heap's top and the lanes' fronts, so the order is exactly the order the
//! heap alone would give (the reference `rust-limit --queue lanes` measured
//! this at 3.4× the plain heap).
//!
//! **The current instant.** A message with no latency at all (a hop over a
//! zero-latency network) is delivered at the current instant, after the event
//! being handled and *before* any other event, even one due at the same instant
//! and scheduled earlier: [`EventQueue::schedule_now`]. Delivering it inline
//! would re-enter a handler half-way through its update; queueing it by
//! `(time, seq)` would cost a lane scan per message for an order that is no
//! more right (every order of simultaneous events is a tie-break, and this one
//! is as deterministic). In the shared Catalog benchmark more than half of all
//! events are such hops.

use crate::time::{SimDuration, SimTime};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Names a cancellable event; [`EventQueue::cancel`] takes it.
///
/// Handles are cheap to copy and safe to keep after the event fired or was
/// cancelled: cancelling a handle twice, or after its event fired, does nothing.
///
/// 8 bytes, and so is `Option<TimerHandle>` (the slot is stored plus one, never
/// zero): entities that keep one stay small.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerHandle {
    slot_plus_one: std::num::NonZeroU32,
    generation: u32,
}

impl TimerHandle {
    fn new(slot: u32, generation: u32) -> TimerHandle {
        TimerHandle {
            slot_plus_one: std::num::NonZeroU32::new(slot.wrapping_add(1))
                .expect("fewer than 2^32 - 1 live timers"),
            generation,
        }
    }

    fn slot(self) -> u32 {
        self.slot_plus_one.get() - 1
    }
}

const NOT_CANCELLABLE: u32 = u32::MAX;
/// An entry whose owner decides, when it reaches the front, whether it still
/// stands (see [`EventQueue::schedule_owned`]).
const OWNED: u32 = u32::MAX - 1;

#[derive(Clone, Copy)]
struct Entry<E> {
    time: SimTime,
    seq: u64,
    slot: u32,
    generation: u32,
    event: E,
}

/// `(time, seq)` as one number, in the same order: one 128-bit comparison
/// (two instructions, no branch) instead of a comparison of tuples, whose
/// branch on equal times a heap's sift mispredicts half the time.
#[inline(always)]
fn order_key(time: SimTime, seq: u64) -> u128 {
    (u128::from(time.0) << 64) | u128::from(seq)
}

impl<E> Entry<E> {
    #[inline(always)]
    fn key(&self) -> u128 {
        order_key(self.time, self.seq)
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl<E> Eq for Entry<E> {}
/// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest entry. The
/// comparison operators are spelled out: the heap's sift uses `<=`, which
/// would otherwise go through `cmp` and an `Ordering`.
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
    #[inline(always)]
    fn lt(&self, other: &Self) -> bool {
        other.key() < self.key()
    }
    #[inline(always)]
    fn le(&self, other: &Self) -> bool {
        other.key() <= self.key()
    }
    #[inline(always)]
    fn gt(&self, other: &Self) -> bool {
        other.key() > self.key()
    }
    #[inline(always)]
    fn ge(&self, other: &Self) -> bool {
        other.key() >= self.key()
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest entry.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

/// A FIFO of `Copy` values in a ring whose size is a power of two: a push or
/// a pop wraps with a mask, where `VecDeque` compares and subtracts. Every
/// slot holds a value (the free ones a stale copy), so it needs no `unsafe`.
#[derive(Clone)]
struct Ring<T> {
    slots: Vec<T>,
    head: usize,
    len: usize,
}

impl<T: Copy> Ring<T> {
    const fn new() -> Self {
        Ring {
            slots: Vec::new(),
            head: 0,
            len: 0,
        }
    }

    #[inline(always)]
    fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The value `i` places behind the front.
    #[inline(always)]
    fn get(&self, i: usize) -> Option<&T> {
        if i < self.len {
            Some(&self.slots[(self.head + i) & (self.slots.len() - 1)])
        } else {
            None
        }
    }

    #[inline(always)]
    fn front(&self) -> Option<&T> {
        self.get(0)
    }

    #[inline(always)]
    fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let value = self.slots[self.head];
        self.head = (self.head + 1) & (self.slots.len() - 1);
        self.len -= 1;
        Some(value)
    }

    /// Appends `value`. A full ring grows out of line, and nothing is left
    /// to do after that call: the path that does not grow keeps everything
    /// in scratch registers, with none to save and restore.
    #[inline(always)]
    fn push_back(&mut self, value: T) {
        if self.len == self.slots.len() {
            return self.grow_and_push(value);
        }
        let at = (self.head + self.len) & (self.slots.len() - 1);
        self.slots[at] = value;
        self.len += 1;
    }

    /// Doubles the ring (at least 16 slots), the values in order from slot
    /// 0, the new slots filled with copies of `value`, then appends `value`.
    #[cold]
    #[inline(never)]
    fn grow_and_push(&mut self, value: T) {
        let size = (self.slots.len() * 2).max(16);
        let mut slots = Vec::with_capacity(size);
        slots.extend((0..self.len).filter_map(|i| self.get(i).copied()));
        slots.resize(size, value);
        self.slots = slots;
        self.head = 0;
        self.len += 1;
    }
}

/// Most lanes a queue keeps; further constant delays use the heap.
const MAX_LANES: usize = 16;

/// No entry: the front key of an empty lane (`order_key(NEVER, u64::MAX)`).
const EMPTY_FRONT: u128 = u128::MAX;

/// Where the last entry came from, in `popped_lane`: the heap, not a lane.
const FROM_HEAP: usize = usize::MAX;

/// A priority queue of events of type `E` over virtual time, with a clock.
///
/// Events are `Copy` (the simulator's are 16 bytes): the queue keeps them in
/// rings and hands out copies.
///
/// A clone is the same queue at the same instant: both deliver the same
/// events in the same order (a run forks from another's state this way).
#[derive(Clone)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    /// The heap's top was delivered but is still in the heap: the next push
    /// to the heap takes its place (one sift down, instead of a pop's sift
    /// and a push's), or the next pop removes it first. A handler often
    /// schedules into the heap right after its event came from it (the next
    /// arrival, the next work done).
    heap_top_taken: bool,
    /// Each constant delay's FIFO lane, in the order the delays were first
    /// seen; its delay and the `(time, seq)` of its front (as an
    /// [`order_key`]) are kept side by side so that choosing the next event
    /// reads one small array, not every lane.
    lanes: Vec<Ring<Entry<E>>>,
    lane_delays: Vec<SimDuration>,
    lane_fronts: Vec<u128>,
    /// Events due at `now`, before everything else, in the order scheduled.
    at_now: Ring<E>,
    /// The lane the last entry came from ([`FROM_HEAP`]: the heap).
    popped_lane: usize,
    now: SimTime,
    next_seq: u64,
    /// Current generation of each timer slot.
    generations: Vec<u32>,
    /// Slots whose timer fired or was cancelled, ready for reuse.
    free_slots: Vec<u32>,
    delivered: u64,
    stale: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue at time zero.
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            heap_top_taken: false,
            lanes: Vec::new(),
            lane_delays: Vec::new(),
            lane_fronts: Vec::new(),
            at_now: Ring::new(),
            popped_lane: FROM_HEAP,
            now: SimTime::ZERO,
            next_seq: 0,
            generations: Vec::new(),
            free_slots: Vec::new(),
            delivered: 0,
            stale: 0,
        }
    }

    /// The time of the event delivered last (the simulation clock).
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Events delivered so far (stale, cancelled entries excluded).
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Cancelled entries popped and skipped so far.
    pub fn stale_popped(&self) -> u64 {
        self.stale
    }

    /// Entries still queued, cancelled ones included.
    pub fn pending(&self) -> usize {
        self.at_now.len() + self.heap.len() - usize::from(self.heap_top_taken)
            + self.lanes.iter().map(Ring::len).sum::<usize>()
    }

    /// Schedules `event` at `at`. Scheduling into the past is a broken invariant
    /// of the caller and panics.
    pub fn schedule(&mut self, at: SimTime, event: E) {
        self.push(at, NOT_CANCELLABLE, 0, event);
    }

    /// Sets `count` sequence numbers aside and returns the first: entries
    /// scheduled with them ([`EventQueue::schedule_reserved`]) order among
    /// ties as if scheduled now, whenever they are scheduled. A run
    /// reserves its timeline's places this way, so that a run forked from
    /// another's state can put its own timeline where a run of its own
    /// would have it.
    pub fn reserve_seqs(&mut self, count: u64) -> u64 {
        let first = self.next_seq;
        self.next_seq += count;
        first
    }

    /// Schedules `event` at `at` with a sequence number set aside by
    /// [`EventQueue::reserve_seqs`] (one not used yet), on the heap, not
    /// cancellable.
    pub fn schedule_reserved(&mut self, at: SimTime, seq: u64, event: E) {
        assert!(
            seq < self.next_seq,
            "sequence number {seq} was not reserved"
        );
        assert!(
            at >= self.now,
            "event scheduled in the past: {at} < now {}",
            self.now
        );
        self.settle_heap_top();
        self.heap.push(Entry {
            time: at,
            seq,
            slot: NOT_CANCELLABLE,
            generation: 0,
            event,
        });
    }

    /// Removes every entry of the heap that `drop` picks (lanes and the
    /// current instant are not searched: for entries scheduled with
    /// [`EventQueue::schedule`] or [`EventQueue::schedule_reserved`]).
    pub fn remove_from_heap(&mut self, mut drop: impl FnMut(&E) -> bool) {
        self.settle_heap_top();
        self.heap.retain(|entry| !drop(&entry.event));
    }

    /// Removes the delivered top the heap still holds (see `heap_top_taken`).
    fn settle_heap_top(&mut self) {
        if self.heap_top_taken {
            self.heap_top_taken = false;
            self.heap.pop();
        }
    }

    /// The time of the next event [`EventQueue::pop_with`] would deliver,
    /// without delivering it: entries at the front that do not stand are
    /// skipped and counted as [`EventQueue::pop_with`] would (so a caller
    /// that peeks, then pops, sees the same run as one that only pops).
    pub fn next_standing_time(&mut self, mut stands: impl FnMut(&E) -> bool) -> Option<SimTime> {
        if !self.at_now.is_empty() {
            return Some(self.now);
        }
        loop {
            self.settle_heap_top();
            let from = self.earliest_source();
            let entry = if from == FROM_HEAP {
                *self.heap.peek()?
            } else {
                *self.lanes[from].front()?
            };
            let live = match entry.slot {
                OWNED => stands(&entry.event),
                NOT_CANCELLABLE => true,
                slot => self.generations[slot as usize] == entry.generation,
            };
            if live {
                return Some(entry.time);
            }
            // Stale: what `pop_with` would skip.
            let skipped = self.pop_any();
            debug_assert!(skipped.is_some_and(|e| e.key() == entry.key()));
            self.stale += 1;
        }
    }

    /// Schedules `event` after `delay` from now.
    pub fn schedule_in(&mut self, delay: SimDuration, event: E) {
        self.schedule(self.now + delay, event);
    }

    /// Schedules `event` at the current instant, to be delivered after the event
    /// being handled and before any other (see the module's doc). Not
    /// cancellable.
    #[inline]
    pub fn schedule_now(&mut self, event: E) {
        self.at_now.push_back(event);
    }

    /// Schedules `event` after `delay`, a delay the caller uses over and over (a
    /// constant timeout, backoff or hop): it goes to that delay's FIFO lane.
    pub fn schedule_constant(&mut self, delay: SimDuration, event: E) {
        self.push_lane(delay, NOT_CANCELLABLE, 0, event);
    }

    /// A cancellable [`EventQueue::schedule_constant`].
    pub fn schedule_constant_timer(&mut self, delay: SimDuration, event: E) -> TimerHandle {
        let (slot, generation) = self.new_slot();
        self.push_lane(delay, slot, generation, event);
        TimerHandle::new(slot, generation)
    }

    /// Schedules `event` at `at`, owned: when it reaches the front,
    /// [`EventQueue::pop_with`]'s predicate decides whether it is delivered or
    /// skipped as cancelled (see the module's doc). [`EventQueue::pop`]
    /// delivers it.
    pub fn schedule_owned(&mut self, at: SimTime, event: E) {
        self.push(at, OWNED, 0, event);
    }

    /// [`EventQueue::schedule_owned`] after a constant `delay`: its FIFO lane.
    pub fn schedule_constant_owned(&mut self, delay: SimDuration, event: E) {
        self.push_lane(delay, OWNED, 0, event);
    }

    /// Schedules a cancellable `event` at `at` and returns its handle.
    pub fn schedule_timer(&mut self, at: SimTime, event: E) -> TimerHandle {
        let (slot, generation) = self.new_slot();
        self.push(at, slot, generation, event);
        TimerHandle::new(slot, generation)
    }

    fn new_slot(&mut self) -> (u32, u32) {
        let slot = match self.free_slots.pop() {
            Some(slot) => slot,
            None => {
                self.generations.push(0);
                u32::try_from(self.generations.len() - 1).expect("fewer than 2^32 live timers")
            }
        };
        (slot, self.generations[slot as usize])
    }

    /// Cancels a timer in O(1); its entry is skipped when it reaches the top.
    /// Does nothing if the timer already fired or was cancelled.
    pub fn cancel(&mut self, handle: TimerHandle) {
        let current = &mut self.generations[handle.slot() as usize];
        if *current == handle.generation {
            *current = current.wrapping_add(1);
            self.free_slots.push(handle.slot());
        }
    }

    /// Whether the timer is still pending (neither fired nor cancelled).
    pub fn is_pending(&self, handle: TimerHandle) -> bool {
        self.generations[handle.slot() as usize] == handle.generation
    }

    /// Where the earliest entry is: the lane whose front it is, or
    /// [`FROM_HEAP`] (the heap's top, or nothing anywhere). The heap's top
    /// must not be a delivered one (see `heap_top_taken`).
    #[inline(always)]
    fn earliest_source(&self) -> usize {
        let mut best = self.heap.peek().map_or(EMPTY_FRONT, Entry::key);
        let mut from = FROM_HEAP;
        for (i, &front) in self.lane_fronts.iter().enumerate() {
            if front < best {
                best = front;
                from = i;
            }
        }
        from
    }

    /// Removes the next entry, live or stale, in `(time, seq)` order.
    #[inline(always)]
    fn pop_any(&mut self) -> Option<Entry<E>> {
        if self.heap_top_taken {
            self.heap_top_taken = false;
            self.heap.pop();
        }
        let from = self.earliest_source();
        self.popped_lane = from;
        if from == FROM_HEAP {
            // Left in place until the next push or pop (see `heap_top_taken`).
            let entry = *self.heap.peek()?;
            self.heap_top_taken = true;
            return Some(entry);
        }
        let lane = &mut self.lanes[from];
        let entry = lane.pop_front();
        self.lane_fronts[from] = lane.front().map_or(EMPTY_FRONT, Entry::key);
        entry
    }

    /// Whether no event is due at the current instant
    /// ([`EventQueue::schedule_now`]).
    #[inline]
    pub fn nothing_due_now(&self) -> bool {
        self.at_now.is_empty()
    }

    /// Counts an event of the current instant that its caller delivered
    /// itself, at once, instead of scheduling it with
    /// [`EventQueue::schedule_now`] and popping it with
    /// [`EventQueue::pop_now`]: [`EventQueue::delivered`] counts it the same.
    #[inline]
    pub fn count_delivered_at_once(&mut self) {
        self.delivered += 1;
    }

    /// Removes the next event due at the current instant (see
    /// [`EventQueue::schedule_now`]), if any: lets the caller deliver a chain of
    /// instantaneous messages without going back through its run loop.
    #[inline]
    pub fn pop_now(&mut self) -> Option<E> {
        let event = self.at_now.pop_front()?;
        self.delivered += 1;
        Some(event)
    }

    /// Removes the next live event, advances the clock to its time and returns
    /// it. Owned entries count as live: a caller that schedules them pops
    /// with [`EventQueue::pop_with`].
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.pop_with(|_| true)
    }

    /// [`EventQueue::pop`], where `stands` decides whether an owned entry
    /// ([`EventQueue::schedule_owned`]) is live; one that does not stand is
    /// skipped and counted as a cancelled entry. Asked of owned entries only.
    ///
    /// The first entry popped is handled here, inline; skipping stale ones
    /// goes on out of line ([`EventQueue::pop_after_stale`]): a loop here,
    /// inlined into the caller's run loop, had the compiler reload and spill
    /// the queue's fields around it on every pop.
    #[inline]
    pub fn pop_with(&mut self, mut stands: impl FnMut(&E) -> bool) -> Option<(SimTime, E)> {
        if let Some(event) = self.at_now.pop_front() {
            self.delivered += 1;
            return Some((self.now, event));
        }
        let entry = self.pop_any()?;
        if !self.live(&entry, &mut stands) {
            return self.pop_after_stale(stands);
        }
        Some(self.deliver(entry))
    }

    /// The rest of [`EventQueue::pop_with`] once a stale entry was skipped.
    #[inline(never)]
    fn pop_after_stale(&mut self, mut stands: impl FnMut(&E) -> bool) -> Option<(SimTime, E)> {
        loop {
            let entry = self.pop_any()?;
            if self.live(&entry, &mut stands) {
                return Some(self.deliver(entry));
            }
        }
    }

    /// Whether a popped entry is to be delivered; a cancellable timer that
    /// is fires (its handle retired, so that a late cancel is a no-op), one
    /// that is not counts as stale.
    #[inline(always)]
    fn live(&mut self, entry: &Entry<E>, stands: &mut impl FnMut(&E) -> bool) -> bool {
        let live = if entry.slot == OWNED {
            stands(&entry.event)
        } else if entry.slot != NOT_CANCELLABLE {
            let current = &mut self.generations[entry.slot as usize];
            let live = *current == entry.generation;
            if live {
                *current = current.wrapping_add(1);
                self.free_slots.push(entry.slot);
            }
            live
        } else {
            true
        };
        if !live {
            self.stale += 1;
        }
        live
    }

    #[inline(always)]
    fn deliver(&mut self, entry: Entry<E>) -> (SimTime, E) {
        self.now = entry.time;
        self.delivered += 1;
        (entry.time, entry.event)
    }

    /// The event `distance` places behind the front of the FIFO lane the last
    /// popped event came from, if it is live (or owned: only its owner
    /// knows): an event not due yet but soon,
    /// for the caller to warm up what its handler will touch (a lane is in
    /// time order, so its future is known; the heap's is not, cheaply). Only
    /// that lane moved, so only its view changed.
    pub fn upcoming(&self, distance: usize) -> Option<&E> {
        let entry = self.lanes.get(self.popped_lane)?.get(distance)?;
        let live = entry.slot >= OWNED || self.generations[entry.slot as usize] == entry.generation;
        live.then_some(&entry.event)
    }

    /// Like [`EventQueue::upcoming`], but live or cancelled, and without
    /// reading the timer's generation: it only asks the CPU for it, so that
    /// the pop that reaches the entry finds it in cache. For a caller that
    /// warms up what the event points to, whose own lookups tell a stale key
    /// (a hint to the cache on a cancelled event's entity costs nothing but
    /// the hint). The generations are scattered over as many slots as timers
    /// pending, and reading one here, `distance` pops early, stalled the run
    /// loop on a miss of its own.
    #[inline]
    pub fn upcoming_hint(&self, distance: usize) -> Option<&E> {
        let entry = self.lanes.get(self.popped_lane)?.get(distance)?;
        if let Some(generation) = self.generations.get(entry.slot as usize) {
            crate::slab::prefetch(generation);
        }
        Some(&entry.event)
    }

    /// The time of the next entry (possibly a stale one), without popping.
    pub fn peek_time(&self) -> Option<SimTime> {
        if !self.at_now.is_empty() {
            return Some(self.now);
        }
        let lanes = self.lanes.iter().filter_map(|l| l.front().map(|e| e.time));
        // A taken top is gone already: the heap's next is among the rest.
        let taken = self
            .heap_top_taken
            .then(|| self.heap.peek().map(Entry::key));
        self.heap
            .iter()
            .filter(|e| Some(Some(e.key())) != taken)
            .map(|e| e.time)
            .min()
            .into_iter()
            .chain(lanes)
            .min()
    }

    /// Pushes onto the FIFO lane of `delay`: a lookup of the delay among at
    /// most [`MAX_LANES`], and an append. A new delay, or a ring that must
    /// grow, goes out of line, so that this path saves no registers.
    #[inline]
    fn push_lane(&mut self, delay: SimDuration, slot: u32, generation: u32, event: E) {
        let Some(lane) = self.lane_delays.iter().position(|d| *d == delay) else {
            return self.push_new_lane(delay, slot, generation, event);
        };
        let seq = self.next_seq;
        self.next_seq += 1;
        let time = self.now + delay;
        let entries = &mut self.lanes[lane];
        if entries.is_empty() {
            self.lane_fronts[lane] = order_key(time, seq);
        }
        entries.push_back(Entry {
            time,
            seq,
            slot,
            generation,
            event,
        });
    }

    /// A delay seen for the first time: a lane of its own while there are
    /// fewer than [`MAX_LANES`], else the heap.
    #[cold]
    #[inline(never)]
    fn push_new_lane(&mut self, delay: SimDuration, slot: u32, generation: u32, event: E) {
        if self.lanes.len() < MAX_LANES {
            self.lanes.push(Ring::new());
            self.lane_delays.push(delay);
            self.lane_fronts.push(EMPTY_FRONT);
            self.push_lane(delay, slot, generation, event);
        } else {
            self.push(self.now + delay, slot, generation, event);
        }
    }

    #[inline]
    fn push(&mut self, at: SimTime, slot: u32, generation: u32, event: E) {
        assert!(
            at >= self.now,
            "event scheduled in the past: {at} < now {}",
            self.now
        );
        let seq = self.next_seq;
        self.next_seq += 1;
        let entry = Entry {
            time: at,
            seq,
            slot,
            generation,
            event,
        };
        if self.heap_top_taken {
            // The delivered top's place: one sift down, from the top.
            self.heap_top_taken = false;
            if let Some(mut top) = self.heap.peek_mut() {
                *top = entry;
            }
        } else if self.heap.len() == self.heap.capacity() {
            self.grow_heap_and_push(entry);
        } else {
            // Never grows (the compiler sees it): no call on this path, so
            // no registers to save around one.
            self.heap.push(entry);
        }
    }

    /// [`EventQueue::push`] onto a full heap (rare once warm).
    #[cold]
    #[inline(never)]
    fn grow_heap_and_push(&mut self, entry: Entry<E>) {
        self.heap.push(entry);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(q: &mut EventQueue<&'static str>) -> Vec<(u64, &'static str)> {
        std::iter::from_fn(|| q.pop().map(|(t, e)| (t.0, e))).collect()
    }

    #[test]
    fn an_event_at_now_comes_before_everything_else_due_then() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(5), "first at 5");
        q.schedule(SimTime(5), "second at 5");
        q.schedule(SimTime(9), "at 9");
        assert_eq!(q.pop(), Some((SimTime(5), "first at 5")));
        // Sent by the handler of "first at 5" over a zero-latency hop.
        q.schedule_now("message");
        q.schedule_now("reply");
        assert_eq!(q.peek_time(), Some(SimTime(5)));
        assert_eq!(q.pop_now(), Some("message"));
        assert_eq!(
            drain(&mut q),
            vec![(5, "reply"), (5, "second at 5"), (9, "at 9")]
        );
        assert_eq!(q.delivered(), 5);
    }

    #[test]
    fn upcoming_shows_live_lane_entries_at_a_distance() {
        let mut q = EventQueue::new();
        let step = SimDuration(10);
        let timers: Vec<_> = (0..4)
            .map(|i| {
                q.schedule_in(SimDuration(1), "tick");
                let timer = q.schedule_constant_timer(step, ["a", "b", "c", "d"][i]);
                q.pop();
                timer
            })
            .collect();
        // The last pop came from the heap: no lane moved.
        assert_eq!(q.upcoming(1), None);
        q.schedule_in(SimDuration(20), "after the lane");
        assert_eq!(q.pop(), Some((SimTime(10), "a")));
        assert_eq!(q.upcoming(0), Some(&"b"));
        q.cancel(timers[1]);
        // A cancelled entry is not worth warming up.
        assert_eq!(q.upcoming(0), None);
        assert_eq!(q.upcoming(2), Some(&"d"));
        assert_eq!(q.upcoming(3), None);
        // The hint does not tell: the caller's own lookups do.
        assert_eq!(q.upcoming_hint(0), Some(&"b"));
        assert_eq!(q.upcoming_hint(2), Some(&"d"));
        assert_eq!(q.upcoming_hint(3), None);
    }

    /// The heap's delivered top stays in place until the next push takes its
    /// place or the next pop removes it: nothing of it shows.
    #[test]
    fn a_delivered_heap_top_is_gone_before_it_is_replaced() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(10), "a");
        q.schedule(SimTime(30), "c");
        assert_eq!(q.pop(), Some((SimTime(10), "a")));
        assert_eq!((q.pending(), q.peek_time()), (1, Some(SimTime(30))));
        q.schedule(SimTime(20), "b");
        q.schedule(SimTime(20), "b2");
        assert_eq!((q.pending(), q.peek_time()), (3, Some(SimTime(20))));
        assert_eq!(drain(&mut q), vec![(20, "b"), (20, "b2"), (30, "c")]);
        assert_eq!((q.pending(), q.peek_time()), (0, None));
    }

    #[test]
    fn delivers_in_time_order_and_ties_in_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(30), "c");
        q.schedule(SimTime(10), "a1");
        q.schedule(SimTime(20), "b");
        q.schedule(SimTime(10), "a2");
        q.schedule(SimTime(10), "a3");
        assert_eq!(
            drain(&mut q),
            vec![(10, "a1"), (10, "a2"), (10, "a3"), (20, "b"), (30, "c")]
        );
        assert_eq!(q.now(), SimTime(30));
        assert_eq!(q.delivered(), 5);
    }

    #[test]
    fn cancelled_timers_are_skipped_and_counted_stale() {
        let mut q = EventQueue::new();
        let t1 = q.schedule_timer(SimTime(5), "timeout-1");
        q.schedule(SimTime(7), "work");
        let t2 = q.schedule_timer(SimTime(9), "timeout-2");
        q.cancel(t1);
        assert!(!q.is_pending(t1));
        assert!(q.is_pending(t2));
        assert_eq!(drain(&mut q), vec![(7, "work"), (9, "timeout-2")]);
        assert_eq!(q.stale_popped(), 1);
        assert!(!q.is_pending(t2), "a fired timer is no longer pending");
    }

    #[test]
    fn cancel_after_fire_or_twice_does_not_touch_a_reused_slot() {
        let mut q = EventQueue::new();
        let old = q.schedule_timer(SimTime(1), "old");
        assert_eq!(q.pop(), Some((SimTime(1), "old")));
        // The slot is reused by a new timer; the old handle must not cancel it.
        let new = q.schedule_timer(SimTime(2), "new");
        q.cancel(old);
        q.cancel(old);
        assert!(q.is_pending(new));
        assert_eq!(q.pop(), Some((SimTime(2), "new")));
    }

    #[test]
    fn slots_are_recycled_so_memory_follows_live_timers() {
        let mut q = EventQueue::new();
        for i in 0..1000u64 {
            let h = q.schedule_timer(SimTime(i + 10), "t");
            q.cancel(h);
        }
        assert_eq!(q.generations.len(), 1);
        assert_eq!(drain(&mut q), vec![]);
        assert_eq!(q.stale_popped(), 1000);
    }

    /// Lanes change nothing about the order: the same random schedule through
    /// lanes and through the heap alone pops identically.
    #[test]
    fn lanes_pop_in_exactly_the_heap_order() {
        let mut rng = crate::StreamKey::root(9).rng();
        let mut with_lanes: EventQueue<u32> = EventQueue::new();
        let mut heap_only: EventQueue<u32> = EventQueue::new();
        let delays = [0u64, 5, 5, 7, 100, 1000];
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let mut handles = Vec::new();
        for id in 0..20_000u32 {
            // Interleave scheduling and popping so `now` advances.
            if rng.unit() < 0.45 {
                a.extend(with_lanes.pop().map(|(t, e)| (t.0, e)));
                b.extend(heap_only.pop().map(|(t, e)| (t.0, e)));
            }
            let d = SimDuration(delays[(rng.next_u64() % delays.len() as u64) as usize]);
            match rng.next_u64() % 3 {
                0 => {
                    with_lanes.schedule_constant(d, id);
                    heap_only.schedule_in(d, id);
                }
                1 => {
                    let h1 = with_lanes.schedule_constant_timer(d, id);
                    let h2 = heap_only.schedule_timer(heap_only.now() + d, id);
                    handles.push((h1, h2));
                }
                _ => {
                    let at = with_lanes.now() + SimDuration(rng.next_u64() % 50);
                    with_lanes.schedule(at, id);
                    heap_only.schedule(at, id);
                }
            }
            if rng.unit() < 0.1 && !handles.is_empty() {
                let (h1, h2) =
                    handles.swap_remove((rng.next_u64() % handles.len() as u64) as usize);
                with_lanes.cancel(h1);
                heap_only.cancel(h2);
            }
        }
        a.extend(std::iter::from_fn(|| {
            with_lanes.pop().map(|(t, e)| (t.0, e))
        }));
        b.extend(std::iter::from_fn(|| {
            heap_only.pop().map(|(t, e)| (t.0, e))
        }));
        assert_eq!(a.len(), b.len());
        assert_eq!(a, b);
        assert!(with_lanes.lanes.len() >= 4);
    }

    /// A random mix of every kind of entry, some cancelled, some owned and
    /// void (odd ids), for the tests of peeking and cloning.
    fn busy_queue(seed: u64) -> EventQueue<u32> {
        let mut rng = crate::StreamKey::root(seed).rng();
        let mut q = EventQueue::new();
        let mut handles = Vec::new();
        for id in 0..5_000u32 {
            if rng.unit() < 0.4 {
                q.pop_with(|e| e % 2 == 0);
            }
            let d = SimDuration([0u64, 5, 7, 100][(rng.next_u64() % 4) as usize]);
            match rng.next_u64() % 4 {
                0 => q.schedule_constant(d, id),
                1 => handles.push(q.schedule_constant_timer(d, id)),
                2 => q.schedule_constant_owned(d, id),
                _ => q.schedule(q.now() + SimDuration(rng.next_u64() % 50), id),
            }
            if rng.unit() < 0.1 && !handles.is_empty() {
                let h = handles.swap_remove((rng.next_u64() % handles.len() as u64) as usize);
                q.cancel(h);
            }
        }
        q
    }

    fn drain_with(q: &mut EventQueue<u32>) -> Vec<(u64, u32)> {
        std::iter::from_fn(|| q.pop_with(|e| e % 2 == 0).map(|(t, e)| (t.0, e))).collect()
    }

    #[test]
    fn peeking_at_the_next_standing_time_changes_nothing_a_pop_sees() {
        let mut popped_only = busy_queue(3);
        let mut peeked = busy_queue(3);
        let expected = drain_with(&mut popped_only);
        let mut got = Vec::new();
        while let Some(t) = peeked.next_standing_time(|e| e % 2 == 0) {
            // Twice: a peek is idempotent.
            assert_eq!(peeked.next_standing_time(|e| e % 2 == 0), Some(t));
            let (at, e) = peeked.pop_with(|e| e % 2 == 0).expect("a standing entry");
            assert_eq!(at, t);
            got.push((at.0, e));
        }
        assert_eq!(got, expected);
        assert_eq!(peeked.pop_with(|e| e % 2 == 0), None);
        assert_eq!(
            (peeked.delivered(), peeked.stale_popped()),
            (popped_only.delivered(), popped_only.stale_popped())
        );
    }

    #[test]
    fn a_clone_delivers_what_the_original_does() {
        let mut original = busy_queue(4);
        let mut copy = original.clone();
        assert_eq!(drain_with(&mut copy), drain_with(&mut original));
        assert_eq!(copy.stale_popped(), original.stale_popped());
    }

    #[test]
    fn reserved_places_order_ties_as_if_scheduled_when_reserved() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(5), "scheduled before the reservation");
        let first = q.reserve_seqs(2);
        q.schedule(SimTime(5), "scheduled after it");
        q.schedule_reserved(SimTime(5), first + 1, "second reserved place");
        q.schedule_reserved(SimTime(5), first, "first reserved place");
        q.schedule(SimTime(6), "later");
        q.remove_from_heap(|e| *e == "later");
        assert_eq!(
            drain(&mut q),
            vec![
                (5, "scheduled before the reservation"),
                (5, "first reserved place"),
                (5, "second reserved place"),
                (5, "scheduled after it"),
            ]
        );
    }

    #[test]
    #[should_panic(expected = "in the past")]
    fn scheduling_into_the_past_is_a_bug() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(10), "a");
        q.pop();
        q.schedule(SimTime(9), "b");
    }

    #[test]
    fn owned_entries_are_skipped_when_their_owner_says_so_without_moving_the_clock() {
        let mut q: EventQueue<(&str, bool)> = EventQueue::new();
        q.schedule_constant_owned(SimDuration::from_ms(5.0), ("void timeout", false));
        q.schedule_owned(
            SimTime::ZERO + SimDuration::from_ms(6.0),
            ("void backoff", false),
        );
        q.schedule_constant_owned(SimDuration::from_ms(5.0), ("timeout", true));
        q.schedule(SimTime::ZERO + SimDuration::from_ms(5.0), ("arrival", true));
        q.schedule_owned(SimTime::ZERO + SimDuration::from_ms(7.0), ("backoff", true));
        let mut asked = Vec::new();
        let mut popped = Vec::new();
        while let Some((t, (name, _))) = q.pop_with(|&(name, stands)| {
            asked.push(name);
            stands
        }) {
            popped.push((t.as_nanos() / 1_000_000, name));
        }
        // (time, seq) order among the live ones; the void ones cost no delivery.
        assert_eq!(popped, [(5, "timeout"), (5, "arrival"), (7, "backoff")]);
        // Only owned entries are asked about.
        assert_eq!(
            asked,
            ["void timeout", "timeout", "void backoff", "backoff"]
        );
        assert_eq!((q.delivered(), q.stale_popped()), (3, 2));
        // A void entry last in the queue leaves the clock where it was.
        q.schedule_constant_owned(SimDuration::from_ms(1.0), ("void", false));
        assert_eq!(q.pop_with(|&(_, stands)| stands), None);
        assert_eq!(q.now().as_nanos(), 7_000_000);
        // Without a predicate, owned entries are delivered.
        q.schedule_owned(q.now(), ("any", false));
        assert_eq!(q.pop().map(|(_, e)| e.0), Some("any"));
    }
}
