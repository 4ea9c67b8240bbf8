//! A slab of entities addressed by generational keys, with a prefetch hint.
//!
//! The entities of a run (handlers, calls, attempts) live here: a key names a
//! slot and the generation it was issued for, so a key that outlived its entity
//! finds nothing and a late event is a no-op. Freed slots are reused last in,
//! first out, which keeps the live set dense and warm.
//!
//! Why not the `slotmap` crate, which does the same: a run of a retry storm is
//! bound by memory latency, not by instructions. An attempt that times out was
//! last touched a second earlier, tens of thousands of entities ago, and every
//! handler of such an event starts with a cache miss. The event queue knows
//! which events come next, so the run loop can ask for their entities early
//! ([`Slab::prefetch`]); that needs the address of a slot without reading it,
//! which `slotmap` does not offer.

use std::fmt;
use std::marker::PhantomData;
use std::num::NonZeroU32;

/// Names an entity of type `T` in a [`Slab`]: its slot and the slot's
/// generation when it was inserted. 8 bytes; `Option<Key<T>>` too.
pub struct Key<T> {
    index: u32,
    generation: NonZeroU32,
    _of: PhantomData<fn() -> T>,
}

impl<T> Clone for Key<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Key<T> {}
impl<T> PartialEq for Key<T> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index && self.generation == other.generation
    }
}
impl<T> Eq for Key<T> {}
impl<T> fmt::Debug for Key<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}v{}", self.index, self.generation)
    }
}

/// Aligned to a cache line (measured on catalog-lite: 3-6% less wall time):
/// a slot of an entity of up to 120 bytes then spans two lines, never three
/// as it could at the 16-byte alignment of the allocator, and the generation
/// checked on every lookup shares the first line with the entity's first
/// fields. Small entities pay padding for it (a handler of 88 bytes takes
/// 128), which the run's few megabytes of slabs afford.
#[derive(Clone)]
#[repr(C, align(64))]
struct Slot<T> {
    generation: NonZeroU32,
    /// `None` when free. Entities with a niche (an enum, a key) make this free.
    value: Option<T>,
}

/// Entities of type `T` in a vector of slots, addressed by [`Key`].
#[derive(Clone)]
pub struct Slab<T> {
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
    len: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Slab<T> {
    /// An empty slab.
    pub fn new() -> Self {
        Slab {
            slots: Vec::new(),
            free: Vec::new(),
            len: 0,
        }
    }

    /// Live entities.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no entity is live.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Stores `value` and returns its key. Inlined, so that the entity is
    /// built straight into a free slot rather than on the stack and copied
    /// (an attempt is 120 bytes, and the run inserts one per attempt).
    #[inline(always)]
    pub fn insert(&mut self, value: T) -> Key<T> {
        let Some(index) = self.free.pop() else {
            return self.push(value);
        };
        self.len += 1;
        let slot = &mut self.slots[index as usize];
        slot.value = Some(value);
        Key {
            index,
            generation: slot.generation,
            _of: PhantomData,
        }
    }

    /// Stores `value` in a new slot: the slab grows (rare once warm).
    #[cold]
    #[inline(never)]
    fn push(&mut self, value: T) -> Key<T> {
        self.len += 1;
        let index = u32::try_from(self.slots.len()).expect("fewer than 2^32 live entities");
        let generation = NonZeroU32::MIN;
        self.slots.push(Slot {
            generation,
            value: Some(value),
        });
        Key {
            index,
            generation,
            _of: PhantomData,
        }
    }

    fn slot(&self, key: Key<T>) -> Option<&Slot<T>> {
        self.slots
            .get(key.index as usize)
            .filter(|s| s.generation == key.generation)
    }

    /// The entity, if `key` is still live.
    pub fn get(&self, key: Key<T>) -> Option<&T> {
        self.slot(key).and_then(|s| s.value.as_ref())
    }

    /// The entity, mutably, if `key` is still live.
    pub fn get_mut(&mut self, key: Key<T>) -> Option<&mut T> {
        self.slots
            .get_mut(key.index as usize)
            .filter(|s| s.generation == key.generation)
            .and_then(|s| s.value.as_mut())
    }

    /// Whether `key` is still live.
    pub fn contains_key(&self, key: Key<T>) -> bool {
        self.get(key).is_some()
    }

    /// Takes the entity out; its key, and every copy of it, goes stale.
    /// Inlined, so that the caller reads the fields it needs from the slot
    /// instead of a copy of the whole entity.
    #[inline(always)]
    pub fn remove(&mut self, key: Key<T>) -> Option<T> {
        let slot = self
            .slots
            .get_mut(key.index as usize)
            .filter(|s| s.generation == key.generation)?;
        let value = slot.value.take()?;
        // A slot reused 2^32 times would hand an old key its new entity; wrap
        // to 1 (never 0) and accept that, as slotmap does.
        slot.generation = slot.generation.checked_add(1).unwrap_or(NonZeroU32::MIN);
        self.free.push(key.index);
        self.len -= 1;
        Some(value)
    }

    /// Live entities, in slot order.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.slots.iter().filter_map(|s| s.value.as_ref())
    }

    /// Live entities, in slot order, to change in place.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.slots.iter_mut().filter_map(|s| s.value.as_mut())
    }

    /// Asks the CPU to bring `key`'s slot into cache, without waiting for it
    /// and without reading it: a hint, with no effect on what the program
    /// computes. The run loop calls it for the entities of events a few pops
    /// ahead, so their handlers do not each start with a miss to memory.
    #[inline]
    pub fn prefetch(&self, key: Key<T>) {
        if let Some(slot) = self.slots.get(key.index as usize) {
            prefetch_read(slot as *const Slot<T>);
        }
    }
}

impl<T> std::ops::Index<Key<T>> for Slab<T> {
    type Output = T;
    /// Panics if the key is stale: the caller broke an invariant.
    fn index(&self, key: Key<T>) -> &T {
        self.get(key).expect("a live key")
    }
}

impl<T> std::ops::IndexMut<Key<T>> for Slab<T> {
    fn index_mut(&mut self, key: Key<T>) -> &mut T {
        self.get_mut(key).expect("a live key")
    }
}

/// Asks the CPU to bring every cache line of `value` into cache, without
/// waiting: a hint, with no effect on what the program computes. For data
/// outside a [`Slab`] that a handler will soon touch (a record the entity
/// points to).
#[inline]
pub fn prefetch<T>(value: &T) {
    prefetch_read(value as *const T);
}

/// A prefetch hint for every cache line `*ptr` spans: a slot of 128 bytes
/// spans two lines, and a record outside a slab need not be aligned to one;
/// a handler that finds the last line cold waits for memory all the same.
#[inline(always)]
fn prefetch_read<T>(ptr: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        const LINE: usize = 64;
        let bytes = ptr as *const i8;
        let size = std::mem::size_of::<T>();
        let lines = (ptr as usize % LINE + size).div_ceil(LINE);
        for line in 0..lines {
            // SAFETY: a prefetch never faults and never reads into the
            // program: it only warms the cache, so any address is sound (the
            // offset is computed with `wrapping_add`, never dereferenced).
            // SSE is part of the x86_64 baseline.
            #[allow(unsafe_code)]
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(bytes.wrapping_add(line * LINE));
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ptr;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_keys_find_nothing_after_reuse() {
        let mut slab = Slab::new();
        let a = slab.insert("a");
        assert_eq!(slab.remove(a), Some("a"));
        let b = slab.insert("b");
        // The slot is reused, the old key is not.
        assert_eq!(slab.get(a), None);
        assert_eq!(slab.remove(a), None);
        assert_eq!(slab[b], "b");
        assert_eq!(slab.len(), 1);
        slab.prefetch(a);
    }

    #[test]
    fn keys_and_their_options_are_eight_bytes() {
        assert_eq!(std::mem::size_of::<Key<u64>>(), 8);
        assert_eq!(std::mem::size_of::<Option<Key<u64>>>(), 8);
    }

    #[test]
    fn free_slots_are_reused_last_in_first_out() {
        let mut slab = Slab::new();
        let keys: Vec<_> = (0..4).map(|i| slab.insert(i)).collect();
        slab.remove(keys[1]);
        slab.remove(keys[3]);
        let again = slab.insert(9);
        assert_eq!(again.index, keys[3].index);
        assert_eq!(slab.values().copied().collect::<Vec<_>>(), vec![0, 2, 9]);
    }
}
