package kiln

// MayChangeMember decides whether a member with role actor may give the member with role target
// the role to, or remove them when to is empty. Owners and admins manage members; only an owner
// makes, unmakes or removes an owner. Leaving (a member removing themself) is not decided here:
// anyone may leave. That an organization keeps an owner is the store's rule (ErrLastOwner).
func MayChangeMember(actor, target, to Role) error {
	if !actor.Allows(ActAdmin) {
		return Errorf(EInsufficientScope, "only an owner or admin may manage members")
	}
	if to != "" && !to.Valid() {
		return FieldError(EValidation, "role must be one of owner, admin, member, viewer", "role", "must be one of owner, admin, member, viewer")
	}
	if (target == RoleOwner || to == RoleOwner) && actor != RoleOwner {
		if to == "" {
			return Errorf(EInsufficientScope, "only an owner may remove an owner")
		}
		return Errorf(EInsufficientScope, "only an owner may make or unmake an owner")
	}
	return nil
}
