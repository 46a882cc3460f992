package explore

// Every state the package's tests search is read back from its level with the fingerprint it was
// stowed with (unstow panics otherwise).
func init() { checkStows = true }
