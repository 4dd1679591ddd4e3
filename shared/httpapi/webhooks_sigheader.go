package httpapi

import (
	"strings"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/webhooks"
)

// applySignatureHeader sets a kiln webhook's extra signature header from v (null or "" removes
// it); a bad name, or one for a chat webhook, is an error on signatureHeader.
func applySignatureHeader(v Optional[string], h *kiln.Webhook, format kiln.WebhookFormat, errs kiln.FieldErrors) {
	if !v.Set {
		return
	}
	name := strings.TrimSpace(v.Value)
	switch {
	case name == "":
		h.SignatureHeader = ""
	case format.Chat():
		errs.Add("signatureHeader", "applies to kiln webhooks only: chat messages are not signed")
	default:
		if problem := webhooks.CheckSignatureHeader(name); problem != "" {
			errs.Add("signatureHeader", problem)
		} else {
			h.SignatureHeader = name
		}
	}
}
