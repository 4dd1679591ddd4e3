package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// login is `p4 login -a -p`: the password is read from stdin (as p4 reads it when stdin is not a
// terminal, after its prompt); the right one issues a new ticket, valid from any host, printed
// on its own line. P4PASSWD must not be what logs in.
func login(st state, stateFile, user string, out *output) int {
	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		return fail("fakep4: read password: %v", err)
	}
	password := strings.TrimRight(string(raw), "\r\n")
	want, ok := st.Passwords[user]
	if !ok || want == "" || password != want {
		return out.fail(sevFailed, evConfig, "Password invalid.")
	}
	st.Logins++
	ticket := fmt.Sprintf("%032X", st.Logins*7919+len(user))
	if st.Users == nil {
		st.Users = map[string]string{}
	}
	st.Users[user] = ticket
	b, err := json.MarshalIndent(st, "", "  ")
	if err == nil {
		err = os.WriteFile(stateFile, b, 0o600)
	}
	if err != nil {
		return fail("fakep4: save state: %v", err)
	}
	fmt.Print("Enter password: \n" + ticket + "\n")
	return 0
}
