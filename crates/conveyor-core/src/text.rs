//! Text as conveyor compares it for exact duplicates: a new line's title against the open
//! lines' of its project, a journal entry against the questions already asked (the judge's
//! duplicate rule, [`crate::judge::rules`]). The store keeps each row's text in this form.

/// Text as compared for exact duplicates: lower case, runs of blanks as one space, without
/// the closing `?`, `.` or `!`.
pub fn normalise(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
        .trim_end_matches(['?', '.', '!', ' ', '？'])
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalised_text_ignores_case_spacing_and_the_closing_mark() {
        assert_eq!(
            normalise("  Keep   the OLD  api? "),
            normalise("keep the old api")
        );
        assert_eq!(normalise("Use SQLite."), "use sqlite");
        assert_ne!(normalise("keep the old api"), normalise("drop the old api"));
    }
}
