package api

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
)

// Page sizes of lists and logs.
const (
	defaultPage = 100
	maxPage     = 1000
	// maxScanRounds bounds the backend reads one filtered page (a user's
	// processes, the user view) may take to fill up.
	maxScanRounds = 8
)

func (s *Server) createProcess(w http.ResponseWriter, r *http.Request, who identity) error {
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	var req CreateRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	if strings.TrimSpace(req.Recipe) == "" {
		return errorf(http.StatusUnprocessableEntity, CodeMissingRecipe, "recipe: required; GET /v1/recipes lists them")
	}
	if req.Input != "" {
		if err := requireContent("input", req.Input); err != nil {
			return err
		}
	}
	if _, err := s.cfg.Backend.Recipes().Get(req.Recipe); err != nil {
		return err // recipes.ErrNotFound: 422, with the names to choose from
	}
	rec, err := s.cfg.Backend.Create(r.Context(), brain.NewProcess{
		Recipe: req.Recipe, Input: req.Input, Owner: who.name, Metadata: req.Metadata, IdempotencyKey: key,
	})
	if err != nil && rec.ID == "" {
		return err
	}
	if err != nil {
		// The process exists but its schedules are not all armed: answer
		// with it, so the client does not create it twice.
		s.logger(r).Error("process created without all its schedules", zap.String("process", rec.ID), zap.Error(err))
	}
	w.Header().Set("Location", "/v1/processes/"+rec.ID)
	s.writeJSON(w, r, http.StatusCreated, processOf(rec, who))
	return nil
}

func (s *Server) getProcess(w http.ResponseWriter, r *http.Request, who identity) error {
	rec, err := s.process(r.Context(), r.PathValue("id"), who)
	if err != nil {
		return err
	}
	p := processWithInbox(rec, who)
	if p.Pipeline, err = s.pipeline(r.Context(), rec); err != nil {
		return err
	}
	s.writeJSON(w, r, http.StatusOK, p)
	return nil
}

// pipeline is where the pipeline of process rec stands, read from its log,
// when its recipe has phases; nil otherwise (and when the recipe is gone
// from the library, or none is loaded).
func (s *Server) pipeline(ctx context.Context, rec store.Record) (*Pipeline, error) {
	lib := s.cfg.Backend.Recipes()
	if lib == nil { // none loaded yet: /readyz says so, and the record is still answered
		return nil, nil
	}
	rc, err := lib.Get(rec.Recipe)
	if err != nil || len(rc.Phases) == 0 {
		return nil, nil
	}
	// The pipeline's newest run is what its view needs: the log is read
	// back from its end, a page at a time, to the newest phase start (or
	// the log's start), not whole.
	var log []conversation.Event
	for before := ""; ; {
		page, more, err := s.cfg.Backend.LogBefore(ctx, rec.ID, before, pipelinePage)
		if err != nil {
			return nil, err
		}
		log = append(page, log...)
		started := slices.ContainsFunc(page, func(e conversation.Event) bool {
			return e.PhaseChange != nil && e.PhaseChange.Reason == conversation.PhaseStart
		})
		if started || !more || len(page) == 0 {
			return pipelineOf(rc.Phases, log), nil
		}
		before = page[0].ID
	}
}

// pipelinePage is how many events of a log the pipeline view reads at a
// time, from the end: most pipeline runs fit in one.
const pipelinePage = 256

// deleteProcess removes a process and everything it has, its workers
// included (a user's own, any for operators), and answers with the process
// as it was and the workers deleted. The log keeps who deleted what: the
// process's own log is gone.
func (s *Server) deleteProcess(w http.ResponseWriter, r *http.Request, who identity) error {
	pid := r.PathValue("id")
	if err := s.authorize(r.Context(), pid, who); err != nil {
		return err
	}
	rec, workers, err := s.cfg.Backend.Delete(r.Context(), pid)
	if len(workers) > 0 { // even when the process itself was refused
		s.logger(r).Info("workers deleted", zap.String("process", pid), zap.String("by", qualified(string(who.role), who.name)),
			zap.Strings("workers", workers))
	}
	if err != nil {
		return err
	}
	s.logger(r).Info("process deleted", zap.String("process", pid), zap.String("by", qualified(string(who.role), who.name)),
		zap.String("recipe", rec.Recipe), zap.String("state", string(rec.Status.State)), zap.String("owner", rec.Owner))
	s.writeJSON(w, r, http.StatusOK, DeletedProcess{Process: processOf(rec, who), Workers: workers})
	return nil
}

// process returns the record of process pid if the caller may see it. A
// process of another user is not found, exactly as a missing one.
func (s *Server) process(ctx context.Context, pid string, who identity) (store.Record, error) {
	rec, err := s.cfg.Backend.Get(ctx, pid)
	if err != nil {
		return store.Record{}, err
	}
	if !who.sees(rec) {
		return store.Record{}, notFound(pid)
	}
	return rec, nil
}

// authorize checks that the caller may act on process pid. Operators may act
// on every process (the backend reports a missing one), users only on their
// own.
func (s *Server) authorize(ctx context.Context, pid string, who identity) error {
	if who.role != RoleUser {
		return nil
	}
	_, err := s.process(ctx, pid, who)
	return err
}

// listProcesses lists processes a page at a time: all of them for
// operators and admins, a user's own from the owner index, or with parent
// the workers of one process (which a user sees, as any worker, only if it
// is hers); with recipe, only that recipe's. A page filtered by state or
// recipe may come back short; further pages of the backend (a bounded
// number) are read to fill it.
func (s *Server) listProcesses(w http.ResponseWriter, r *http.Request, who identity) error {
	state, err := stateParam(r)
	if err != nil {
		return err
	}
	recipe := r.URL.Query().Get("recipe")
	if recipe != "" {
		if err := recipes.CheckName(recipe); err != nil {
			return errorf(http.StatusBadRequest, CodeInvalidParameter, "recipe: %v; GET /v1/recipes lists them", err)
		}
	}
	limit, err := limitParam(r, defaultPage, maxPage)
	if err != nil {
		return err
	}
	after := r.URL.Query().Get("after")
	if after != "" && !validCursor(after) {
		return errorf(http.StatusBadRequest, CodeInvalidParameter, "after: %q is not a cursor a page returned as next", after)
	}
	list := s.cfg.Backend.List
	switch parent := r.URL.Query().Get("parent"); {
	case parent != "":
		if _, err := s.process(r.Context(), parent, who); err != nil {
			return err
		}
		list = func(ctx context.Context, state lifecycle.State, after string, limit int) ([]store.Record, string, error) {
			return s.cfg.Backend.ListWorkers(ctx, parent, state, after, limit)
		}
	case who.role == RoleUser:
		list = func(ctx context.Context, state lifecycle.State, after string, limit int) ([]store.Record, string, error) {
			return s.cfg.Backend.ListOwned(ctx, who.name, state, after, limit)
		}
	}
	page := ProcessPage{Processes: []Process{}}
	for range maxScanRounds {
		recs, next, err := list(r.Context(), state, after, limit-len(page.Processes))
		if err != nil {
			return err
		}
		for _, rec := range recs {
			if who.sees(rec) && (recipe == "" || rec.Recipe == recipe) {
				page.Processes = append(page.Processes, processWithInbox(rec, who))
			}
		}
		after = next
		if next == "" || len(page.Processes) >= limit {
			break
		}
	}
	page.Next = after
	s.writeJSON(w, r, http.StatusOK, page)
	return nil
}

func (s *Server) postMessage(w http.ResponseWriter, r *http.Request, who identity) error {
	pid := r.PathValue("id")
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	var req MessageRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	if err := requireContent("content", req.Content); err != nil {
		return err
	}
	if err := s.authorize(r.Context(), pid, who); err != nil {
		return err
	}
	id, err := s.cfg.Backend.Send(r.Context(), pid, who.userFrom(), req.Content, key)
	if err != nil {
		return err
	}
	s.writeJSON(w, r, http.StatusAccepted, MessageAccepted{MessageID: id})
	return nil
}

// listInbox answers the messages waiting in a process's inbox (operators:
// it holds operators' messages too), oldest first.
func (s *Server) listInbox(w http.ResponseWriter, r *http.Request, _ identity) error {
	msgs, err := s.cfg.Backend.Inbox(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	list := InboxList{Messages: make([]InboxMessage, 0, len(msgs))}
	for _, m := range msgs {
		list.Messages = append(list.Messages, InboxMessage{ID: m.ID, Kind: string(m.Kind), From: m.From, Content: m.Content, At: m.At.UTC()})
	}
	s.writeJSON(w, r, http.StatusOK, list)
	return nil
}

func (s *Server) steer(w http.ResponseWriter, r *http.Request, who identity) error {
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	var req MessageRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	if err := requireContent("content", req.Content); err != nil {
		return err
	}
	id, err := s.cfg.Backend.Steer(r.Context(), r.PathValue("id"), who.operatorBy(), req.Content, key)
	if err != nil {
		return err
	}
	s.writeJSON(w, r, http.StatusAccepted, MessageAccepted{MessageID: id})
	return nil
}

// control fires an operator's lifecycle event: pause, resume, stop
// (finish) or retry. An event the process's state forbids is a 409.
func (s *Server) control(ev lifecycle.Event) handler {
	return func(w http.ResponseWriter, r *http.Request, who identity) error {
		rec, err := s.cfg.Backend.Transition(r.Context(), r.PathValue("id"), ev, who.operatorBy())
		if err != nil {
			return err
		}
		s.writeJSON(w, r, http.StatusOK, processOf(rec, who))
		return nil
	}
}
