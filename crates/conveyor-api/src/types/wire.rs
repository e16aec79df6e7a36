//! The derives every wire type shares, as two macros: `wire!` for a struct or an enum, and
//! `named!` for an enum whose names are also listed for parsing and display. Declared first
//! in `types/mod.rs`, so every file of the folder can use them.

/// Derives shared by every wire type.
macro_rules! wire {
    ($(#[$m:meta])* $vis:vis struct $name:ident $body:tt) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
        #[cfg_attr(feature = "openapi", derive(ToSchema))]
        $vis struct $name $body
    };
    ($(#[$m:meta])* $vis:vis enum $name:ident $body:tt) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
        #[cfg_attr(feature = "openapi", derive(ToSchema))]
        #[serde(rename_all = "snake_case")]
        $vis enum $name $body
    };
}

/// A wire enum whose every variant has a snake_case name: `ALL`, `as_str`, `parse` and
/// `Display` from one list, so the names cannot drift from serde's (a test holds them to it).
macro_rules! named {
    ($(#[$m:meta])* pub enum $name:ident { $($(#[$vm:meta])* $variant:ident = $text:literal,)* }) => {
        wire! {
            $(#[$m])*
            pub enum $name { $($(#[$vm])* $variant,)* }
        }

        impl $name {
            /// Every value.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The snake_case name sent on the wire.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)* }
            }

            /// Parses the snake_case name.
            pub fn parse(s: &str) -> Option<$name> {
                $name::ALL.iter().copied().find(|v| v.as_str() == s)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
