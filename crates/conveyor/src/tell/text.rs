//! What the Catcher and PlanFix are told, in Anton's language: the message catalogue, HTML
//! escaping for Telegram's `parse_mode=HTML`, and the split of long texts below Telegram's
//! 4096 characters. Pure: strings in, strings out.

use crate::config::Lang;

/// Telegram's limit on a message's text, in UTF-16 code units after entities are parsed.
pub const TELEGRAM_MAX: usize = 4096;

/// What is left of the limit for one part when a message is packed: room for an answer line
/// added later by an edit, so an edited part never outgrows the limit.
pub const PART_MAX: usize = TELEGRAM_MAX - 300;

/// Telegram's limit on a button's `callback_data`, in bytes.
pub const CALLBACK_MAX: usize = 64;

/// Escapes text for Telegram's HTML parse mode: `<`, `>` and `&` (the only three it needs;
/// quotes matter only inside attributes, which never hold user text here).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            _ => out.push(ch),
        }
    }
    out
}

/// The text Telegram shows for markup: tags dropped, the four entities decoded (for
/// previews and length checks).
pub fn plain(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for ch in html.chars() {
        match ch {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(ch),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// Length as Telegram counts it (UTF-16 code units), of the markup itself: never less than
/// the parsed text's.
pub fn units(s: &str) -> usize {
    s.encode_utf16().count()
}

/// Splits markup into parts of at most `max` UTF-16 units, at line boundaries. The markup
/// written here keeps every tag within one line, so a cut between lines never splits a tag;
/// a single line longer than `max` (a long question, escaped text with no tags) is cut at a
/// character boundary outside an entity.
pub fn split(html: &str, max: usize) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    for line in html.split('\n') {
        for piece in cut_line(line, max) {
            let need = units(&piece) + usize::from(!cur.is_empty());
            if !cur.is_empty() && units(&cur) + need > max {
                parts.push(std::mem::take(&mut cur));
            }
            if !cur.is_empty() {
                cur.push('\n');
            }
            cur.push_str(&piece);
        }
    }
    if !cur.trim().is_empty() || parts.is_empty() {
        parts.push(cur);
    }
    parts
}

/// One line in pieces of at most `max` units, never inside an `&…;` entity.
fn cut_line(line: &str, max: usize) -> Vec<String> {
    if units(line) <= max {
        return vec![line.to_string()];
    }
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut n = 0;
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        // An entity goes whole.
        let mut unit = String::from(chars[i]);
        if chars[i] == '&'
            && let Some(end) = chars[i..].iter().take(10).position(|c| *c == ';')
        {
            unit = chars[i..=i + end].iter().collect();
        }
        let w = units(&unit);
        if n + w > max && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
            n = 0;
        }
        i += unit.chars().count();
        n += w;
        cur.push_str(&unit);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// A button's label: the option's first 60 characters.
pub fn label(s: &str) -> String {
    let s = s.trim();
    let mut out: String = s.chars().take(60).collect();
    if s.chars().count() > 60 {
        out.push('…');
    }
    out
}

/// The catalogue: each thing the daemon says, in Russian and English.
#[derive(Debug, Clone, Copy)]
pub struct Words(pub Lang);

impl Words {
    fn pick(self, ru: &'static str, en: &'static str) -> &'static str {
        match self.0 {
            Lang::Ru => ru,
            Lang::En => en,
        }
    }

    /// `project: title` in bold after a heading.
    fn head(self, icon: &str, what: &str, project: &str, title: &str) -> String {
        format!(
            "{icon} <b>{}</b> · {}: {}",
            escape(what),
            escape(project),
            escape(title)
        )
    }

    pub fn ready(self, project: &str, title: &str) -> String {
        self.head(
            "✅",
            self.pick("Готово, можно принимать", "Ready to accept"),
            project,
            title,
        )
    }

    pub fn accept_button(self) -> &'static str {
        self.pick("Принять", "Accept")
    }

    pub fn question(
        self,
        project: &str,
        title: &str,
        text: &str,
        default: Option<&str>,
        why: Option<&str>,
    ) -> String {
        let mut s = self.head("❓", self.pick("Вопрос", "Question"), project, title);
        s.push('\n');
        s.push_str(&escape(text));
        if let Some(d) = default {
            s.push('\n');
            s.push_str(&format!(
                "<i>{}</i> {}",
                self.pick("По умолчанию:", "Default:"),
                escape(d)
            ));
        }
        if let Some(w) = why {
            s.push('\n');
            s.push_str(&format!(
                "<i>{}</i> {}",
                self.pick("Почему:", "Why:"),
                escape(w)
            ));
        }
        s.push('\n');
        s.push_str(&format!(
            "<i>{}</i>",
            self.pick(
                "Ответьте кнопкой или ответом на это сообщение.",
                "Press a button, or reply to this message."
            )
        ));
        s
    }

    pub fn rolled_back(self, project: &str, title: &str, reason: Option<&str>) -> String {
        self.with_reason(
            self.head("↩️", self.pick("Откат", "Rolled back"), project, title),
            reason,
        )
    }

    pub fn gate_failed(self, project: &str, title: &str, reason: Option<&str>) -> String {
        self.with_reason(
            self.head(
                "⛔",
                self.pick("Не проходит гейт", "Cannot pass the gate"),
                project,
                title,
            ),
            reason,
        )
    }

    fn with_reason(self, mut s: String, reason: Option<&str>) -> String {
        if let Some(r) = reason.filter(|r| !r.trim().is_empty()) {
            s.push('\n');
            // At most a few lines of the daemon's reason: the app has the rest.
            let short: String = r.chars().take(600).collect();
            s.push_str(&escape(&short));
        }
        s
    }

    pub fn vault_closed(self, path: &str, check: &str) -> String {
        format!(
            "🔒 <b>{}</b>\n{}\n<code>{}</code> · {}",
            self.pick("Сейф закрыт", "The vault is closed"),
            self.pick(
                "Линии, которым нужна память, ждут и пойдут сами, когда он откроется.",
                "Lines that need memory wait, and go on by themselves once it opens."
            ),
            escape(check),
            escape(path),
        )
    }

    pub fn digest(self, n: usize) -> String {
        format!(
            "🌙 <b>{}</b> ({n})",
            self.pick("Пока была ночь", "While it was night")
        )
    }

    /// A test message; `n` is its outbox row, as Settings lists it.
    pub fn test(self, n: i64) -> String {
        format!(
            "🔔 <b>{}</b> #{n}",
            self.pick(
                "Проверка связи: conveyor на месте.",
                "A test: the conveyor can reach you."
            )
        )
    }

    /// The line an edit adds under a message whose question was answered or line accepted.
    pub fn resolved(self, what: &str) -> String {
        format!("<i>→ {}</i>", escape(what))
    }

    pub fn answered(self, option: &str) -> String {
        format!("{} {option}", self.pick("Ответ:", "Answer:"))
    }

    pub fn accepted(self) -> String {
        self.pick("Принято", "Accepted").into()
    }

    /// What a press is answered with when it did nothing.
    pub fn refused(self, why: &str) -> String {
        format!("{} {why}", self.pick("Не вышло:", "Not done:"))
    }

    pub fn reply_ambiguous(self) -> &'static str {
        self.pick(
            "В этом сообщении несколько вопросов: ответьте в приложении.",
            "This message holds several questions: answer in the app.",
        )
    }

    /// The PlanFix report's parts.
    pub fn report_head(self) -> &'static str {
        self.pick("Conveyor: линия готова", "Conveyor: the line is done")
    }
    pub fn report_done(self) -> &'static str {
        self.pick("Что сделано", "What was done")
    }
    pub fn report_files(self) -> &'static str {
        self.pick("Файлы", "Files")
    }
    pub fn report_checks(self) -> &'static str {
        self.pick("Проверки (зелёные)", "Checks (green)")
    }
    pub fn report_cost(self) -> &'static str {
        self.pick("Стоимость", "Cost")
    }
    pub fn report_branch(self) -> &'static str {
        self.pick("Ветка", "Branch")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_leaves_nothing_telegram_would_read_as_markup() {
        let e = escape("a <b> & </b> \"q\" 'x' ><");
        assert_eq!(e, "a &lt;b&gt; &amp; &lt;/b&gt; \"q\" 'x' &gt;&lt;");
        assert_eq!(plain(&e), "a <b> & </b> \"q\" 'x' ><");
        assert_eq!(plain("<b>x</b> &amp;lt;"), "x &lt;");
    }

    #[test]
    fn long_texts_split_at_lines_below_the_limit_and_lose_nothing() {
        let lines: Vec<String> = (0..400)
            .map(|i| format!("<b>{i}</b> line of text ✓"))
            .collect();
        let text = lines.join("\n");
        let parts = split(&text, 1000);
        assert!(parts.len() > 5, "{}", parts.len());
        for p in &parts {
            assert!(units(p) <= 1000, "{}", units(p));
            // Every tag opened in a part is closed in it.
            assert_eq!(p.matches("<b>").count(), p.matches("</b>").count());
        }
        assert_eq!(parts.join("\n"), text);
    }

    #[test]
    fn one_overlong_line_is_cut_outside_entities() {
        let line = "&amp;".repeat(500) + &"я".repeat(3000);
        let parts = split(&line, 1001);
        assert!(parts.iter().all(|p| units(p) <= 1001));
        assert_eq!(parts.concat(), line);
        for p in &parts {
            // No part starts or ends inside an entity.
            assert!(!p.starts_with("amp;") && !p.ends_with('&'), "{p:.20}");
        }
        // UTF-16: astral characters count twice.
        assert_eq!(units("😀"), 2);
        assert!(
            split(&"😀".repeat(600), 1000)
                .iter()
                .all(|p| units(p) <= 1000)
        );
    }

    #[test]
    fn a_short_text_is_one_part() {
        assert_eq!(split("hi", TELEGRAM_MAX), ["hi"]);
        assert_eq!(split("", TELEGRAM_MAX), [""]);
    }

    #[test]
    fn user_text_in_a_message_is_escaped_in_both_languages() {
        for lang in [Lang::Ru, Lang::En] {
            let w = Words(lang);
            let q = w.question(
                "p<1>",
                "t&t",
                "drop <table>?",
                Some("no & keep"),
                Some("a<b"),
            );
            assert!(!q.contains("<table>") && q.contains("&lt;table&gt;"), "{q}");
            assert!(q.contains("p&lt;1&gt;") && q.contains("t&amp;t"), "{q}");
            let r = w.gate_failed("p", "t", Some("exit 1 <stderr>"));
            assert!(r.contains("&lt;stderr&gt;"), "{r}");
        }
        assert!(Words(Lang::Ru).ready("p", "t").contains("можно принимать"));
        assert!(Words(Lang::En).ready("p", "t").contains("Ready to accept"));
    }

    #[test]
    fn labels_are_cut_to_sixty_characters() {
        assert_eq!(label(" yes "), "yes");
        let l = label(&"д".repeat(80));
        assert_eq!(l.chars().count(), 61);
    }
}
