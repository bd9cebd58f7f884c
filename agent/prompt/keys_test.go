package prompt

// Throwaway keys the prompt tests name people with.
const (
	testPkHex = "299ed02e8537779781c1ec09e13bba57bff851297d525cf27dfd4b23a8ced10b"
	testNpub  = "npub19x0dqt59xame0qwpasy7zwa627lls5ff04f9eunal49j82xw6y9sxga6uu"
	otherNpub = "npub1nj2087kwwccx5lcflmvvpnw08wlcchcx4ashlqju2aa7vvp7h25sghkst5"
)
