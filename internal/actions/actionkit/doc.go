// Package actionkit holds what the lock action packages (acquire, release,
// prhead) share above lockaction: the injected dependencies of an in-process
// run ([Deps]), the bounded cleanup context used after cancellation, tolerant
// millisecond environment knobs, reservation IDs, and the small markdown
// helpers of the job summaries.
package actionkit
