// Package stripe holds the Stripe handlers hookinbox ships, built on the
// handlers package's API alone:
//
//   - the payment saga (RegisterSaga): a payment_intent.succeeded is
//     credited to the ledger, fulfilled by a call to a fulfillment API, and
//     refunded through a payments API when the fulfillment is refused;
//   - the ledger (RegisterLedger): charge.refunded and
//     payment_intent.payment_failed booked as ledger entries.
//
// They write the tables ledger (one row per booking, unique on its natural
// key) and payment_saga (one row per payment intent: the saga's state and
// its steps' keys), and the saga's steps go through handler_step
// (Event.EnqueueOnce). hookinbox's migrations create these tables
// (migrations/002_handlers.up.sql, 006_saga_failed_step.up.sql), so a
// binary built on hookinbox has them whether it registers these handlers
// or not.
package stripe
