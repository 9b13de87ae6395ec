// Chat Completions ⇄ Responses: messages/items and reasoning in messages.ts, whole requests and
// responses in requests.ts. Everything that converts between the two APIs imports from here.
export * from './messages';
export * from './requests';
