package ec2hosts

// RunAs is the user the agents of a Linux host group run as, as the AMI's systemd unit runs
// `kiln agent` as a user that is not root: each instance takes a uid the stand-in owns for the
// instance's life (Take, e.g. a free uid of KILN_BUILD_UIDS); User is the name the unit gives.
type RunAs struct {
	User string
	// Take holds a uid for one instance; release gives it back once the instance has ended.
	Take func() (uid int, release func(), err error)
}
