//go:build !unix

package nofollow

// openNoBlock: opening a pipe by name does not block here.
const openNoBlock = 0
