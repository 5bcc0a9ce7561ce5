package recipes

import (
	"fmt"
	"strings"
)

// closest returns the candidate nearest to word by edit distance, or "" when
// none is close enough to be what the author meant. Case is ignored; a swap
// of two neighbouring letters counts as one edit. Words of one or two
// letters only match when they differ in case, words of three or four
// letters allow one edit, longer words two. Ties go to the earlier
// candidate.
func closest(word string, candidates []string) string {
	w := strings.ToLower(word)
	var limit int
	switch n := len([]rune(w)); {
	case n <= 2:
		limit = 0
	case n <= 4:
		limit = 1
	default:
		limit = 2
	}
	best, bestDist := "", limit+1
	for _, c := range candidates {
		if d := editDistance(w, strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// didYouMean returns "; did you mean `x`?" for the closest candidate, or "".
func didYouMean(word string, candidates []string) string {
	if c := closest(word, candidates); c != "" && c != word {
		return fmt.Sprintf("; did you mean `%s`?", c)
	}
	return ""
}

// editDistance is the optimal string alignment distance between a and b:
// the number of rune insertions, deletions, substitutions and swaps of
// neighbours that turn a into b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// backquoted joins names as `a`, `b`, `c`.
func backquoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	return strings.Join(q, ", ")
}
