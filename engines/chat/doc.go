// Package chat runs one turn of a chat process: from the drained inbox
// messages to the lone respond call that decides the process's next
// lifecycle state (docs/ARCHITECTURE.md § Turn protocol). Its Contract is
// the respond protocol; the rounds are engines/rounds'.
//
// The engine knows nothing of Redis or HTTP. Nothing is ever decided from
// the words the model wrote: only from which tools it called and with which
// arguments.
package chat
