// Package fakeeditor is a stand-in for Unity.exe in tests of the license
// return: the test binary calls [Dispatch] from TestMain, copies itself to
// the managed editor path, and the return command then runs it with the real
// arguments and the real (allowlisted) environment. The mode is the local
// part of the -username value ("hang@example.test" hangs), since the
// environment is allowlisted and cannot carry a test flag.
//
// Modes:
//
//	clean, clean-crlf   both positive lines, exit 0
//	secret              prints the -password and -username values and an
//	                    SC- serial, then both positive lines, exit 0
//	flood               30 MiB of output, exit 0
//	hang, hang-hard     starts a grandchild that inherits the output pipe,
//	                    reports both pids on $TEMP/fake-editor.ready when
//	                    that FIFO exists, and waits forever; hang-hard
//	                    ignores SIGTERM in both processes
//	leave-grandchild    both positive lines, starts a grandchild that keeps
//	                    the output pipe open, exit 0
//	late-child          the entitlement line, then starts a grandchild that
//	                    inherits the output and prints the ULF-returned line
//	                    only after the editor has exited (as a licensing
//	                    client the editor started may), exit 0
//	bom                 a UTF-8 byte order mark, then both positive lines
//	blocked             a 20111 licensing error, exit 1
//	handoff             a 400006 response with the ULF-returned line, exit 0
//	ulf-skipped         entitlement line and "Serial number unavailable", exit 0
//	exit-N              both positive lines, then exit N (137, 143, ...)
//	silent              nothing, exit 0
//
// Every run records its arguments and environment in
// $TEMP/fake-editor-invocation.json. It is imported only by tests.
package fakeeditor
