// Package tail follows the files of one directory line by line without
// losing or repeating a line across restarts, renames (size rolling),
// day switches, truncation and re-creation. It knows nothing about what the
// lines mean; package torque parses them.
//
// fsnotify on the directory is only a wake-up hint; a periodic reconcile
// (list, stat, read every file to its last complete line) is the truth.
// Files are identified by device and inode, so a renamed file keeps its
// offset, also when the rename hid it from one listing (its position is
// forgotten only after forgetAfter listings without it). A line is handed to the Handler only when its newline is there,
// and its end offset is recorded only after the Handler returned nil; the
// positions file is replaced atomically (temp file + rename).
//
// Delivery guarantee: exactly once across cancellation of Run's context
// and clean restarts; at least once across a hard crash, where the lines
// handled since the last positions write (at most CommitEvery lines) are
// handed on again with the same LineID. A handler that ignores LineIDs it
// has already applied is therefore exactly-once. See README.md.
package tail
