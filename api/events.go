package api

import (
	"net/http"

	"github.com/engine-brain/brain/conversation"
)

// listEvents serves a page of a process's log. In the user view the page is
// conversation.UserView of the log events it covers; Next still advances
// over the events the view leaves out.
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request, who identity) error {
	pid := r.PathValue("id")
	v, err := viewParam(r, who)
	if err != nil {
		return err
	}
	after, err := afterParam(r.URL.Query().Get("after"), "after")
	if err != nil {
		return err
	}
	limit, err := limitParam(r, defaultPage, maxPage)
	if err != nil {
		return err
	}
	if err := s.authorize(r.Context(), pid, who); err != nil {
		return err
	}
	page := EventPage{Events: []conversation.Event{}, Next: after}
	for range maxScanRounds {
		want := limit - len(page.Events)
		evs, err := s.cfg.Backend.Log(r.Context(), pid, page.Next, want)
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			break
		}
		page.Next = evs[len(evs)-1].ID
		page.Events = append(page.Events, project(v, evs)...)
		if len(evs) < want || len(page.Events) >= limit {
			break
		}
	}
	s.writeJSON(w, r, http.StatusOK, page)
	return nil
}

// project returns what view v shows of events.
func project(v view, events []conversation.Event) []conversation.Event {
	if v == viewUser {
		return conversation.UserView(events)
	}
	return events
}

// afterParam checks an event id given as a position in a log.
func afterParam(id, name string) (string, error) {
	if id != "" && !validEventID(id) {
		return "", errorf(http.StatusBadRequest, CodeInvalidParameter, "%s: %q is not an event id (<ms>-<seq>)", name, id)
	}
	return id, nil
}
