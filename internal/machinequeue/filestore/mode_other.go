//go:build !unix

package filestore

import "os"

// noFollow: os.OpenFile on Windows has no O_NOFOLLOW; the directory's ACL
// is what keeps other accounts from planting a link (docs/machine-queue.md).
const noFollow = 0

// shareMode: on Windows a new file inherits the directory's ACL.
func shareMode(*os.File) error { return nil }
