package provider

// FirstThose returns xs with the elements first satisfies moved before the
// others, keeping the order within each group (a stable partition): APIs
// that want a turn's tool results before its other content.
func FirstThose[T any](xs []T, first func(T) bool) []T {
	out := make([]T, 0, len(xs))
	for _, x := range xs {
		if first(x) {
			out = append(out, x)
		}
	}
	for _, x := range xs {
		if !first(x) {
			out = append(out, x)
		}
	}
	return out
}
