// Package actionkit holds what the action packages (acquire, release,
// prhead, recover) share above lockaction, one file per purpose: the
// injected dependencies of an in-process run ([Deps], deps.go), the bounded
// cleanup context used after cancellation (cleanupctx.go), millisecond
// durations in environment knobs and outputs (millis.go), reservation IDs,
// the one UUID generator of the actions (reservation.go), and the small
// markdown helpers of the job summaries (markdown.go).
package actionkit
