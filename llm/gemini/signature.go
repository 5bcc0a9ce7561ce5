package gemini

import (
	"encoding/json"
	"fmt"

	"github.com/engine-brain/brain/conversation"
)

// signatureFormat is the Format of the provider payload that carries a
// part's thought signature: Gemini's opaque token of the reasoning behind
// a part, which it wants back on that part when the conversation is
// replayed. The Value is the signature as a JSON string, in base64 (as on
// the wire).
const signatureFormat = "thought_signature"

// payloadVersion is the Version of every payload this adapter makes: the
// wire contract it was made under, the API version whose thoughtSignature
// field it fills (apiVersion, named apart so that a move of the client to
// another API version is a decision about the payloads logged so far, not
// an accident).
const payloadVersion = "v1beta"

// signaturePayload carries sig in a provider payload; nil for none.
func signaturePayload(sig []byte) *conversation.ProviderPayload {
	if len(sig) == 0 {
		return nil
	}
	v, _ := json.Marshal(sig) // a []byte marshals to a base64 string
	return &conversation.ProviderPayload{Provider: name, Format: signatureFormat, Version: payloadVersion, Value: v}
}

// signatureOf returns the signature p carries: nil for no payload, and for
// another provider's, whose data means nothing to Gemini. A payload of this
// adapter that cannot go back as it came is an error, not dropped: Gemini
// would get the conversation without what it asked to have back, and
// refuse it or answer worse, far from the cause.
//
// A payload without a version was logged before versions were recorded,
// when payloadVersion was already the only contract: it is taken as one.
func signatureOf(p *conversation.ProviderPayload) ([]byte, error) {
	if p == nil || p.Provider != name {
		return nil, nil
	}
	if p.Format != signatureFormat {
		return nil, fmt.Errorf("a %s payload of the unknown format %q (this adapter knows %q; was the log written by a newer brain?)", name, p.Format, signatureFormat)
	}
	if p.Version != payloadVersion && p.Version != "" {
		return nil, fmt.Errorf("a %s %s payload of version %q, which this adapter cannot continue (it continues %q and payloads without a version; was the log written by a newer brain?)", name, p.Format, p.Version, payloadVersion)
	}
	var sig []byte
	if err := json.Unmarshal(p.Value, &sig); err != nil {
		return nil, fmt.Errorf("a %s %s payload whose value is not a base64 string: %w", name, p.Format, err)
	}
	return sig, nil
}
