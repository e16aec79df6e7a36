//! One run of the preflight, what it blocks (every step, a project, a project's merges), and
//! the same as text for a terminal.

use conveyor_api::{
    Preflight, PreflightCode as Code, PreflightItem, PreflightLevel as Level,
    PreflightScope as Scope,
};

use crate::store::rfc3339;

/// One run of every check.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub checked_at_ms: i64,
    pub items: Vec<PreflightItem>,
}

impl Report {
    /// The first item that stops every step: a daemon-scope blocking item.
    pub fn blocks_steps(&self) -> Option<&PreflightItem> {
        self.items
            .iter()
            .find(|i| i.level == Level::Blocking && i.scope == Scope::Daemon)
    }

    /// The first item that stops everything of `project_id` (its checkout aside, which stops
    /// only merges: [`Report::blocks_merge`]).
    pub fn blocks_project<'a>(&'a self, project_id: &'a str) -> Option<&'a PreflightItem> {
        self.of_project(project_id)
            .find(|i| i.level == Level::Blocking && i.code != Code::CleanCheckout)
    }

    /// What stops `project_id`'s merges: its checkout of main has uncommitted changes.
    pub fn blocks_merge<'a>(&'a self, project_id: &'a str) -> Option<&'a PreflightItem> {
        self.of_project(project_id)
            .find(|i| i.level == Level::Blocking && i.code == Code::CleanCheckout)
    }

    fn of_project<'a>(&'a self, project_id: &'a str) -> impl Iterator<Item = &'a PreflightItem> {
        self.items
            .iter()
            .filter(move |i| i.project_id.as_deref() == Some(project_id))
    }

    /// Whether two reports say the same (the time aside): a change is worth an event.
    pub fn same_outcome(&self, other: &Report) -> bool {
        self.items == other.items
    }

    pub fn to_api(&self) -> Preflight {
        Preflight {
            blocking: self.items.iter().any(|i| i.level == Level::Blocking),
            checked_at: rfc3339(self.checked_at_ms),
            items: self.items.clone(),
        }
    }
}

/// The preflight as text for a terminal (`conveyord check`): one line per item, the fix
/// beneath what is not ok, and a last line saying whether anything blocks.
pub fn render(p: &Preflight) -> String {
    let mut out = String::new();
    for i in &p.items {
        let scope = i
            .project_id
            .as_deref()
            .map_or(String::new(), |id| format!(" [project {id}]"));
        out.push_str(&format!(
            "{:<8} {}{scope}: {}\n",
            i.level.as_str(),
            i.code.as_str(),
            i.message
        ));
        if let Some(fix) = &i.fix {
            out.push_str(&format!("         fix: {fix}\n"));
        }
    }
    out.push_str(if p.blocking {
        "something blocks: lines it concerns wait until it is fixed\n"
    } else {
        "nothing blocks\n"
    });
    out
}
