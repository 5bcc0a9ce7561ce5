package api

import (
	"errors"
	"net/http"

	"go.uber.org/zap"

	"github.com/engine-brain/brain/store"
	"github.com/engine-brain/brain/tools"
)

// listTimers answers the timers of a process (a user's own, any for
// operators), by due time: its recipe's schedules and the wakeups it or an
// operator scheduled.
func (s *Server) listTimers(w http.ResponseWriter, r *http.Request, who identity) error {
	pid := r.PathValue("id")
	if err := s.authorize(r.Context(), pid, who); err != nil {
		return err
	}
	timers, err := s.cfg.Backend.Timers(r.Context(), pid)
	if err != nil {
		return err
	}
	list := TimerList{Timers: make([]Timer, 0, len(timers))}
	for _, t := range timers {
		list.Timers = append(list.Timers, timerOf(t))
	}
	s.writeJSON(w, r, http.StatusOK, list)
	return nil
}

// scheduleTimer arms a timer on a process, as its schedule_wakeup tool
// would, and answers it with its id and first due time.
func (s *Server) scheduleTimer(w http.ResponseWriter, r *http.Request, who identity) error {
	pid := r.PathValue("id")
	var req TimerRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	wakeup, err := req.wakeup()
	if err != nil {
		return invalidTimer(err)
	}
	id, due, err := s.cfg.Backend.ScheduleWakeup(r.Context(), tools.Caller{ProcessID: pid}, wakeup)
	if errors.Is(err, tools.ErrInvalidArguments) {
		return invalidTimer(err)
	}
	if err != nil {
		return err
	}
	t := store.Timer{ID: id, Cron: wakeup.Cron, At: wakeup.At, Message: wakeup.Message, Due: due}
	if wakeup.In > 0 {
		t.At = due
	}
	s.logger(r).Info("timer scheduled", zap.String("process", pid), zap.String("timer", id),
		zap.String("by", qualified(string(who.role), who.name)), zap.Time("due", due))
	s.writeJSON(w, r, http.StatusCreated, timerOf(t))
	return nil
}

func invalidTimer(err error) error {
	return errorf(http.StatusUnprocessableEntity, CodeInvalidTimer, "%s", err.Error())
}

// cancelTimer cancels a timer of a process: a wakeup or one of its
// recipe's schedules (which the process then no longer gets).
func (s *Server) cancelTimer(w http.ResponseWriter, r *http.Request, who identity) error {
	pid, id := r.PathValue("id"), r.PathValue("timer")
	if _, err := s.cfg.Backend.Get(r.Context(), pid); err != nil {
		return err
	}
	err := s.cfg.Backend.CancelWakeup(r.Context(), tools.Caller{ProcessID: pid}, id)
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, CodeNotFound, "process %q has no timer %q", pid, id)
	}
	if err != nil {
		return err
	}
	s.logger(r).Info("timer cancelled", zap.String("process", pid), zap.String("timer", id),
		zap.String("by", qualified(string(who.role), who.name)))
	w.WriteHeader(http.StatusNoContent)
	return nil
}
