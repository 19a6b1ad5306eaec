// Package statemachine is the job state machine: given a job's state and an
// event, it computes the job's new state and the actions the host must carry
// out. It does no I/O and reads no clock: the time of the event, the parsed
// schedule, the job's policy and the nonce source are inputs of a Machine.
//
// The host (the engine) runs one Step inside a store transaction on the job,
// saves Machine.Job, turns every action that writes (Record, RecordSkipped,
// TickLater, StartInvocation, PollLater) into writes of that same
// transaction, and only after it committed carries out the actions that call
// a target (Launch, Resolve, Check, AbortTarget). That order is what makes
// "write before call" hold.
//
// An attempt an asynchronous target accepted (Launched) is RUNNING until its
// end is reported (Ended): by a push, which the host turns into a Check of
// the target, or by the polls the machine schedules (PollLater, delivered as
// PollDue), a minute after the launch and then as far apart as the attempt
// has run, up to Config.MaxPoll. Whichever reports first ends it; the
// others find it ended and do nothing.
//
// A job waits in one of five states:
//
//	SCHEDULED  a TickLater is due at the next occurrence
//	QUEUED     an invocation waits to be launched (StartInvocation, or a retry backoff)
//	RUNNING    an invocation is launching or running; ticks go on meanwhile
//	PAUSED     an admin paused it: no ticks, but the one at the pause's end, if it has one
//	DISABLED   removed from config, disabled, or auto-disabled: no ticks
//
// Every state that waits for a task sets Job.WatchdogTimerTs, the time by
// which that task must have run; the watchdog delivers WatchdogExpired to
// jobs whose timer has passed, and the machine re-issues what it waits for.
package statemachine
