//! What the daemon tells Anton outside the app: messages to the Catcher (his Telegram chat
//! with a bot) and report comments to PlanFix, kept in a durable outbox until delivered.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

named! {
    /// Where an outbox message goes.
    pub enum Channel {
        /// The Catcher: Anton's Telegram chat with the daemon's bot.
        Telegram = "telegram",
        /// A report comment on the line's PlanFix task.
        Planfix = "planfix",
    }
}

named! {
    /// What an outbox message says.
    pub enum OutboxKind {
        /// A question that is irreversible and expensive, by day: its options are buttons.
        Question = "question",
        /// A line is ready to accept: a button accepts it.
        Ready = "ready",
        /// A deploy's health check failed and the line was rolled back.
        RolledBack = "rolled_back",
        /// A line cannot pass its gate and needs Anton.
        GateFailed = "gate_failed",
        /// The vault is closed: lines that need memory wait.
        VaultClosed = "vault_closed",
        /// The night's messages, sent as one when the night ends.
        Digest = "digest",
        /// A sent message changed to show what became of it (answered, accepted).
        Edit = "edit",
        /// A line's report comment on its PlanFix task.
        Report = "report",
        /// Sent from Settings to see that the Catcher works (even at night).
        Test = "test",
    }
}

named! {
    /// Where an outbox message stands.
    pub enum OutboxState {
        /// Not delivered yet: due at `next_at`, held for the night's digest, or waiting for
        /// the server to take it.
        Pending = "pending",
        Sent = "sent",
        /// Refused for good (a bad chat, a missing task) or not delivered within a day.
        Failed = "failed",
    }
}

wire! {
    /// One message of the outbox.
    pub struct OutboxItem {
        #[ts(type = "number")]
        pub id: i64,
        pub channel: Channel,
        pub kind: OutboxKind,
        pub state: OutboxState,
        /// Delivery attempts so far.
        pub attempts: u32,
        /// When the next attempt is due, while pending.
        pub next_at: Option<String>,
        pub last_error: Option<String>,
        /// The line it is about, if any.
        pub line_id: Option<String>,
        /// Written at night: held for the digest sent when the night ends.
        pub held: bool,
        /// The first lines of what it says.
        pub preview: String,
        pub created_at: String,
        pub sent_at: Option<String>,
    }
}

wire! {
    /// `GET /api/outbox`: whether the Catcher and PlanFix are configured, and the newest
    /// messages (pending first).
    pub struct Outbox {
        pub catcher: ChannelStatus,
        pub planfix: ChannelStatus,
        /// Pending, then the newest sent and failed ones (at most 200 in all).
        pub items: Vec<OutboxItem>,
        pub pending: u32,
        pub sent: u32,
        pub failed: u32,
    }
}

wire! {
    /// Whether a channel is configured, and where it goes (never its token).
    pub struct ChannelStatus {
        pub configured: bool,
        /// The chat id, or PlanFix's base URL.
        pub target: Option<String>,
    }
}
