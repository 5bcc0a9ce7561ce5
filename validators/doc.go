// Package validators holds the language-agnostic checks of a chat turn and
// their correction texts. A validator looks at the structure of an answer —
// whether it called a tool, how long a reply is next to the tool results it
// follows — and never at the words or the language of what the model wrote.
// It knows conversation events and nothing of recipes, Redis or providers.
package validators
