package migrations

// AllFrom is All over other files, for testing how they are checked.
var AllFrom = all

// CopyInboxKeys is Prepare's copy of the inbox's keys alone.
var CopyInboxKeys = copyInboxKeys
