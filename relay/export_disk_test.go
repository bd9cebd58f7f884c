package relay

// SetMinFreeMB changes a running relay's disk reserve, so a test can put
// it above the real free space (a full disk) and back (space returned).
func SetMinFreeMB(r *Relay, mb int) { r.disk.setReserve(mb) }
