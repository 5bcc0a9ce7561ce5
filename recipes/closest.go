package recipes

// Closest returns the candidate nearest to word, as recipe errors suggest
// one ("did you mean"), or "" when none is close enough; the CLI suggests
// commands with it.
func Closest(word string, candidates []string) string { return closest(word, candidates) }
