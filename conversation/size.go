package conversation

// structBytes is what Size allows for the fixed part of each struct it
// counts (headers, pointers, numbers), so that many small events weigh what
// they cost too.
const structBytes = 64

// Size estimates the memory an event holds: the bytes of every string and
// raw JSON value in it, plus structBytes for each struct. It is cheap (no
// encoding) and meant for bounds such as the node's kept logs, not for
// accounting.
func (e *Event) Size() int {
	n := structBytes + len(e.ID) + len(e.Type) + len(e.Turn) + len(e.By)
	if p := e.TurnStart; p != nil {
		n += structBytes + len(p.Reason)
	}
	if p := e.InboxMessage; p != nil {
		n += structBytes + len(p.MessageID) + len(p.Kind) + len(p.From) + len(p.Content)
	}
	if p := e.ChatResponse; p != nil {
		n += structBytes + len(p.Variant) + len(p.Text) + len(p.Structured) + len(p.Signature) +
			payloadSize(p.Payload) + citationsSize(p.Citations) + rolesSize(p.Audience)
	}
	if p := e.ToolCallRequest; p != nil {
		n += structBytes + len(p.CallID) + len(p.Name) + len(p.Arguments) + payloadSize(p.Payload)
	}
	if p := e.ToolCallResponse; p != nil {
		n += structBytes + len(p.CallID) + len(p.Name) + citationsSize(p.Citations)
		for i := range p.Content {
			n += p.Content[i].size()
		}
	}
	if p := e.ValidationCorrection; p != nil {
		n += structBytes + len(p.Validator) + len(p.Text) + len(p.CallID)
	}
	if p := e.StateChange; p != nil {
		n += structBytes + len(p.From) + len(p.To) + len(p.Event)
	}
	if p := e.SystemNotice; p != nil {
		n += structBytes + len(p.Code) + len(p.Text)
	}
	if p := e.PhaseChange; p != nil {
		n += structBytes + len(p.From) + len(p.To) + len(p.Reason) + len(p.Result)
	}
	if p := e.HostedActivity; p != nil {
		n += structBytes + len(p.ActivityID) + len(p.Name) + len(p.State) + len(p.Input) +
			len(p.Summary) + payloadSize(p.Payload)
	}
	if p := e.Presentation; p != nil {
		n += structBytes + len(p.CallID) + len(p.Summary) + len(p.Blocks) + len(p.Markdown)
	}
	if p := e.ModelUsage; p != nil {
		n += structBytes + len(p.Provider) + len(p.Model)
	}
	if p := e.ApprovalRequested; p != nil {
		for _, c := range p.Calls {
			n += structBytes + len(c.CallID) + len(c.Name) + len(c.Arguments) + len(c.By) + len(c.Key)
		}
	}
	if p := e.ApprovalDecided; p != nil {
		n += structBytes + len(p.CallID) + len(p.Decision) + len(p.Reason)
	}
	return n
}

func (b *Block) size() int {
	n := structBytes + len(b.Type) + len(b.Text) + len(b.MimeType) + len(b.Data)
	if r := b.Resource; r != nil {
		n += structBytes + len(r.URI) + len(r.MimeType) + len(r.Text) + len(r.Blob)
	}
	if a := b.Annotations; a != nil {
		n += structBytes + rolesSize(a.Audience) + len(a.LastModified)
	}
	return n
}

func payloadSize(p *ProviderPayload) int {
	if p == nil {
		return 0
	}
	return structBytes + len(p.Provider) + len(p.Format) + len(p.Version) + len(p.Value)
}

func citationsSize(cs []Citation) int {
	n := 0
	for i := range cs {
		c := &cs[i]
		n += structBytes + len(c.Source.URL) + len(c.Source.Title) + len(c.Excerpt) + payloadSize(c.Replay)
	}
	return n
}

func rolesSize(roles []Role) int {
	n := 0
	for _, r := range roles {
		n += len(r)
	}
	return n
}
