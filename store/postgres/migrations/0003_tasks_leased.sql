-- Claimed tasks by owner and end of lease: a claim finds the tasks of a
-- live owner whose leases have ended as one range of its entries, and
-- NextDue the earliest end of an owner's leases as one probe, so neither
-- reads the thousands of tasks an instance holds claimed ahead (tasks_claimed
-- orders them by ETA, which says nothing of their leases).
CREATE INDEX tasks_leased ON sundial.tasks (owner, lease_until) WHERE owner IS NOT NULL;
