package bench

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Column widths of the report: every figure line is
// "  label  value  note", aligned across all sections.
const (
	labelWidth = 30
	valueWidth = 12
)

// report writes the figures as they come, section by section, and keeps
// the first write error.
type report struct {
	w       io.Writer
	err     error
	started bool
}

func (r *report) printf(format string, args ...any) {
	if r.err != nil {
		return
	}
	_, r.err = fmt.Fprintf(r.w, format, args...)
}

// title starts a section.
func (r *report) title(s string) {
	if r.started {
		r.printf("\n")
	}
	r.started = true
	r.printf("%s\n", s)
}

// line writes one figure; note (may be empty) says how it was measured.
func (r *report) line(label, value, note string) {
	s := fmt.Sprintf("  %-*s  %-*s  %s", labelWidth, label, valueWidth, value, note)
	r.printf("%s\n", strings.TrimRight(s, " "))
}

// banner writes a note no reader can miss.
func (r *report) banner(lines ...string) {
	r.printf("\n")
	for _, l := range lines {
		r.printf("!! %s\n", l)
	}
}

// Formats of figures.

func fmtCount(n int) string { return fmt.Sprintf("%d", n) }

func fmtRate(n int, d time.Duration) string {
	if d <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", float64(n)/d.Seconds())
}

func fmtRatio(a, b int64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

// fmtDuration rounds d to a precision a reader can take in.
func fmtDuration(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	default:
		return d.Round(time.Microsecond).String()
	}
}

// fmtSize writes a size in B, KiB, MiB or GiB.
func fmtSize(n float64) string {
	sign := ""
	if n < 0 {
		sign, n = "-", -n
	}
	units := []string{"B", "KiB", "MiB", "GiB"}
	u := 0
	for n >= 1024 && u < len(units)-1 {
		n /= 1024
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%s%.1f B", sign, n)
	}
	return fmt.Sprintf("%s%.1f %s", sign, n, units[u])
}
