//! Zombie accounting: work still running for a request whose sender has left.
//!
//! S3's checkout incident: a user gives up after 30 s and refreshes, but the
//! backend keeps working on the old request, so each refresh leaves one more
//! request behind that nobody will read. The unit is the *root attempt*, one
//! try of a workload's request (a user's request or one of its refreshes): it
//! becomes a zombie when it is over for its sender (the sender stopped
//! waiting, or got its answer: an error from a gateway that gave up, say)
//! while some handler or attempt below it is still alive, and stops being one
//! when the last of them ends. Every handler and attempt carries its root's index and holds one
//! reference to it, so the count is exact and conserved: every zombie that
//! starts ends, its work completed (wasted) or cancelled.
//!
//! A per-hop flag (a handler's own caller left) cannot tell this: with static
//! timeouts, Inventory's caller Order still waits for it long after the user
//! behind Order has gone.

/// The root of work that serves no workload request (a cache load).
pub(crate) const NO_ROOT: u32 = u32::MAX;
/// The user of an open-loop workload's request.
pub(crate) const NO_USER: u32 = u32::MAX;

/// One root attempt's references and fate.
#[derive(Clone, Copy, Debug, Default)]
struct RootRecord {
    /// Handlers and attempts alive below it (the root attempt included).
    refs: u32,
    workload: u32,
    user: u32,
    /// It is over for its sender (given up on, or answered).
    over: bool,
    /// Counted as a zombie (over with work alive).
    zombie: bool,
}

/// One closed-loop user's zombies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UserZombies {
    /// Zombie requests of this user alive now.
    pub now: u32,
    /// Most alive at once.
    pub peak: u32,
    /// Zombie requests this user left behind in all.
    pub total: u32,
    /// Tries that ended without success for this user: given up on, or
    /// answered with an error (each one a reason to refresh).
    pub gave_up: u32,
}

/// The run's root attempts and zombie counts. Memory grows with the root
/// attempts alive at once (records are reused), plus one entry per
/// closed-loop user.
#[derive(Clone, Debug, Default)]
pub(crate) struct Zombies {
    records: Vec<RootRecord>,
    free: Vec<u32>,
    /// Zombie requests alive now.
    pub alive: u64,
    /// Most alive at once.
    pub peak: u64,
    /// Zombie requests that started, and that ended.
    pub started: u64,
    pub ended: u64,
    /// Root attempts that ended without success (given up on, or failed).
    pub abandoned: u64,
    /// `users[workload][user]`, for closed-loop workloads (empty otherwise).
    pub users: Vec<Vec<UserZombies>>,
}

impl Zombies {
    /// Accounting for workloads with these many closed-loop users each (0: an
    /// open loop).
    pub fn new(users_per_workload: impl Iterator<Item = u32>) -> Zombies {
        Zombies {
            users: users_per_workload
                .map(|n| vec![UserZombies::default(); n as usize])
                .collect(),
            ..Zombies::default()
        }
    }

    /// A root attempt starts; the caller holds its first reference.
    pub fn open(&mut self, workload: u32, user: u32) -> u32 {
        let record = RootRecord {
            refs: 1,
            workload,
            user,
            ..RootRecord::default()
        };
        match self.free.pop() {
            Some(i) => {
                self.records[i as usize] = record;
                i
            }
            None => {
                self.records.push(record);
                (self.records.len() - 1) as u32
            }
        }
    }

    /// Something below `root` came alive.
    #[inline]
    pub fn hold(&mut self, root: u32) {
        if root != NO_ROOT {
            self.records[root as usize].refs += 1;
        }
    }

    /// Something below `root` ended; the last one ends its zombie, if it is one.
    #[inline]
    pub fn release(&mut self, root: u32) {
        if root == NO_ROOT {
            return;
        }
        let record = &mut self.records[root as usize];
        record.refs -= 1;
        if record.refs > 0 {
            return;
        }
        if record.zombie {
            let (workload, user) = (record.workload, record.user);
            self.alive -= 1;
            self.ended += 1;
            if let Some(u) = self.user_mut(workload, user) {
                u.now -= 1;
            }
        }
        self.free.push(root);
    }

    /// Warms up `root`'s record for a handler about to touch it: records
    /// are reused and scattered, and one that a timeout or a late answer
    /// releases was last touched long before (see `stormsim_engine::Slab`).
    /// A hint, with no effect on the results.
    #[inline]
    pub fn prefetch(&self, root: u32) {
        if let Some(record) = self.records.get(root as usize) {
            stormsim_engine::prefetch(record);
        }
    }

    /// Whether `root` is over for its sender: whatever completes below it
    /// now is wasted.
    #[inline]
    pub fn is_over(&self, root: u32) -> bool {
        root != NO_ROOT && self.records[root as usize].over
    }

    /// `root` is over for its sender: answered (`succeeded` or not), or given
    /// up on. Its own reference is still held: call [`Zombies::settle`] once
    /// it is released and the cancellation has run its course.
    pub fn end(&mut self, root: u32, succeeded: bool) {
        if root == NO_ROOT {
            return;
        }
        let record = &mut self.records[root as usize];
        if record.over {
            return;
        }
        record.over = true;
        if succeeded {
            return;
        }
        self.abandoned += 1;
        let (workload, user) = (record.workload, record.user);
        if let Some(u) = self.user_mut(workload, user) {
            u.gave_up += 1;
        }
    }

    /// After a root attempt that is over released its own reference and its
    /// callee had the chance to stop: whatever is still alive below it is a
    /// zombie.
    pub fn settle(&mut self, root: u32) {
        if root == NO_ROOT {
            return;
        }
        let record = &mut self.records[root as usize];
        if record.refs == 0 || !record.over || record.zombie {
            return;
        }
        record.zombie = true;
        let (workload, user) = (record.workload, record.user);
        self.alive += 1;
        self.started += 1;
        self.peak = self.peak.max(self.alive);
        if let Some(u) = self.user_mut(workload, user) {
            u.now += 1;
            u.total += 1;
            u.peak = u.peak.max(u.now);
        }
    }

    /// Root attempts alive (for the end-of-run invariants).
    pub fn live_records(&self) -> usize {
        self.records.len() - self.free.len()
    }

    fn user_mut(&mut self, workload: u32, user: u32) -> Option<&mut UserZombies> {
        self.users
            .get_mut(workload as usize)
            .and_then(|users| users.get_mut(user as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_root_abandoned_with_nothing_alive_below_is_no_zombie() {
        let mut z = Zombies::new([1].into_iter());
        let root = z.open(0, 0);
        z.end(root, false);
        z.release(root);
        z.settle(root);
        assert_eq!((z.started, z.alive, z.abandoned), (0, 0, 1));
        assert_eq!(z.users[0][0].gave_up, 1);
        assert_eq!(z.live_records(), 0);
    }

    #[test]
    fn a_zombie_lives_until_the_last_handler_below_it_ends() {
        let mut z = Zombies::new([2].into_iter());
        let root = z.open(0, 1);
        z.hold(root); // gateway handler
        z.hold(root); // its attempt to Order
        z.end(root, false);
        z.release(root); // the user's attempt is gone
        z.settle(root);
        assert_eq!((z.started, z.alive), (1, 1));
        assert!(z.is_over(root));
        assert_eq!(
            z.users[0][1],
            UserZombies {
                now: 1,
                peak: 1,
                total: 1,
                gave_up: 1
            }
        );
        z.release(root);
        assert_eq!(z.alive, 1);
        z.release(root);
        assert_eq!((z.alive, z.ended), (0, 1));
        assert_eq!(z.users[0][1].now, 0);
        assert_eq!(z.live_records(), 0);
    }

    #[test]
    fn a_user_refreshing_piles_zombies_up_and_records_are_reused() {
        let mut z = Zombies::new([1].into_iter());
        let mut roots = Vec::new();
        for _ in 0..4 {
            let root = z.open(0, 0);
            z.hold(root); // the handler that runs on
            z.end(root, false);
            z.release(root);
            z.settle(root);
            roots.push(root);
        }
        assert_eq!(
            z.users[0][0],
            UserZombies {
                now: 4,
                peak: 4,
                total: 4,
                gave_up: 4
            }
        );
        for root in roots {
            z.release(root);
        }
        assert_eq!((z.alive, z.peak, z.started, z.ended), (0, 4, 4, 4));
        let reused = z.open(0, 0);
        assert!(reused < 4 && !z.is_over(reused));
    }

    #[test]
    fn an_answered_root_with_work_still_running_below_is_a_zombie_too() {
        let mut z = Zombies::new([1].into_iter());
        let root = z.open(0, 0);
        z.hold(root); // a handler that answered in time but left a call running
        z.end(root, true);
        z.release(root);
        z.settle(root);
        assert_eq!((z.started, z.abandoned), (1, 0));
        assert_eq!(z.users[0][0].gave_up, 0);
        z.release(root);
        assert_eq!((z.alive, z.ended), (0, 1));
    }

    #[test]
    fn open_loop_roots_count_without_users() {
        let mut z = Zombies::new([0].into_iter());
        let root = z.open(0, NO_USER);
        z.hold(root);
        z.end(root, false);
        z.release(root);
        z.settle(root);
        assert_eq!(z.alive, 1);
        z.release(root);
        assert_eq!(z.ended, 1);
        z.hold(NO_ROOT);
        z.release(NO_ROOT);
        assert!(!z.is_over(NO_ROOT));
    }
}
