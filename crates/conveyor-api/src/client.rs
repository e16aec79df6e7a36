//! An async client of the daemon's API (reqwest, rustls), used by the app and the tests.

use futures_util::StreamExt;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::types::*;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The daemon answered with an error.
    #[error("{status}: {}: {message}", code.map_or("http", ErrorCode::as_str))]
    Api {
        /// HTTP status.
        status: u16,
        /// The stable error code; `None` when the answer was not an error body of the API (a
        /// proxy's page, an unknown route), whose text is then the message.
        code: Option<ErrorCode>,
        /// Human text.
        message: String,
    },
    /// The request could not be sent or the answer not read.
    #[error("transport: {0}")]
    Transport(#[from] reqwest::Error),
    /// The answer was not the JSON expected.
    #[error("bad answer from {url}: {source}")]
    Decode {
        /// What was called.
        url: String,
        /// The parse error.
        source: serde_json::Error,
    },
}

impl ClientError {
    /// The stable error code, when the daemon sent one.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            ClientError::Api { code, .. } => *code,
            _ => None,
        }
    }
}

/// One page of `GET /api/lines`.
#[derive(Debug, Clone)]
pub struct LinesPage {
    /// The lines of this page.
    pub lines: Vec<Line>,
    /// How many lines match the filters over all pages (`X-Total-Count`).
    pub total: u64,
    /// The offset of the next page (`X-Next-Offset`); `None` on the last page.
    pub next_offset: Option<u64>,
}

/// A client bound to one daemon.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    token: Option<String>,
}

impl Client {
    /// A client of the daemon at `base` (e.g. `http://127.0.0.1:8790`), sending `token` as a
    /// bearer token when given.
    pub fn new(base: impl Into<String>, token: Option<String>) -> Client {
        let base = base.into().trim_end_matches('/').to_string();
        Client {
            // A host that drops packets must not hang a call: give up connecting after 5 s.
            http: reqwest::Client::builder()
                .connect_timeout(std::time::Duration::from_secs(5))
                .build()
                .unwrap_or_default(),
            base,
            token,
        }
    }

    fn req(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let mut r = self.http.request(method, format!("{}{}", self.base, path));
        if let Some(t) = &self.token {
            r = r.bearer_auth(t);
        }
        r
    }

    async fn send<T: DeserializeOwned>(
        &self,
        r: reqwest::RequestBuilder,
    ) -> Result<T, ClientError> {
        Self::decode(r.send().await?).await
    }

    async fn decode<T: DeserializeOwned>(resp: reqwest::Response) -> Result<T, ClientError> {
        let status = resp.status();
        let url = resp.url().to_string();
        let bytes = resp.bytes().await?;
        if !status.is_success() {
            let body: Option<ApiErrorBody> = serde_json::from_slice(&bytes).ok();
            return Err(ClientError::Api {
                status: status.as_u16(),
                code: body.as_ref().map(|b| b.code),
                message: body.map_or_else(
                    || String::from_utf8_lossy(&bytes).into_owned(),
                    |b| b.message,
                ),
            });
        }
        serde_json::from_slice(&bytes).map_err(|source| ClientError::Decode { url, source })
    }

    async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        self.send(self.req(reqwest::Method::GET, path)).await
    }

    async fn post<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, ClientError> {
        self.send(self.req(reqwest::Method::POST, path).json(body))
            .await
    }

    /// `GET /api/health`.
    ///
    /// # Errors
    /// Transport, API or decoding errors, as for every call.
    pub async fn health(&self) -> Result<Health, ClientError> {
        self.get("/api/health").await
    }

    /// `GET /api/projects`.
    ///
    /// # Errors
    /// As [`Client::health`].
    pub async fn projects(&self) -> Result<Vec<Project>, ClientError> {
        self.get("/api/projects").await
    }

    /// `POST /api/projects`.
    ///
    /// # Errors
    /// As [`Client::health`].
    pub async fn create_project(&self, p: &NewProject) -> Result<Project, ClientError> {
        self.post("/api/projects", p).await
    }

    /// `GET /api/lines?state=&project=`: every matching line. The daemon pages the list
    /// (`limit`, at most 1000 a page); this follows the pages (`X-Next-Offset`) to the end, and
    /// keeps a line met twice (its priority changed between two pages) once.
    ///
    /// # Errors
    /// As [`Client::health`].
    pub async fn lines(
        &self,
        state: Option<LineState>,
        project: Option<&str>,
    ) -> Result<Vec<Line>, ClientError> {
        let mut all: Vec<Line> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut offset = 0;
        loop {
            let page = self.lines_page(state, project, None, offset).await?;
            for l in page.lines {
                if seen.insert(l.id.clone()) {
                    all.push(l);
                }
            }
            match page.next_offset {
                Some(n) if n > offset => offset = n,
                _ => break,
            }
        }
        Ok(all)
    }

    /// One page of `GET /api/lines` (`limit` defaults to the daemon's 200), with the total
    /// count and the next page's offset from the response headers.
    ///
    /// # Errors
    /// As [`Client::health`].
    pub async fn lines_page(
        &self,
        state: Option<LineState>,
        project: Option<&str>,
        limit: Option<u32>,
        offset: u64,
    ) -> Result<LinesPage, ClientError> {
        let mut q = Vec::new();
        if let Some(s) = state {
            q.push(("state", s.as_str().to_string()));
        }
        if let Some(p) = project {
            q.push(("project", p.to_string()));
        }
        if let Some(l) = limit {
            q.push(("limit", l.to_string()));
        }
        if offset > 0 {
            q.push(("offset", offset.to_string()));
        }
        let resp = self
            .req(reqwest::Method::GET, "/api/lines")
            .query(&q)
            .send()
            .await?;
        let header = |name: &str| -> Option<u64> {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse().ok())
        };
        let total = header("x-total-count");
        let next_offset = header("x-next-offset");
        let lines: Vec<Line> = Self::decode(resp).await?;
        Ok(LinesPage {
            total: total.unwrap_or(lines.len() as u64),
            next_offset,
            lines,
        })
    }

    /// `POST /api/lines`.
    ///
    /// # Errors
    /// As [`Client::health`].
    pub async fn create_line(&self, l: &NewLine) -> Result<Line, ClientError> {
        self.post("/api/lines", l).await
    }

    /// `GET /api/lines/{id}`.
    ///
    /// # Errors
    /// As [`Client::health`].
    pub async fn line(&self, id: &str) -> Result<LineDetail, ClientError> {
        self.get(&format!("/api/lines/{id}")).await
    }

    /// `GET /api/lines/{id}/diff`.
    ///
    /// # Errors
    /// As [`Client::health`].
    pub async fn line_diff(&self, id: &str) -> Result<LineDiff, ClientError> {
        self.get(&format!("/api/lines/{id}/diff")).await
    }

    /// `GET /api/lines/{id}/runs`.
    ///
    /// # Errors
    /// As [`Client::health`].
    pub async fn line_runs(&self, id: &str) -> Result<Vec<Run>, ClientError> {
        self.get(&format!("/api/lines/{id}/runs")).await
    }

    /// `GET /api/runs/{id}/transcript?after=<after>`.
    ///
    /// # Errors
    /// As [`Client::health`].
    pub async fn transcript(&self, run_id: i64, after: u64) -> Result<Transcript, ClientError> {
        self.get(&format!("/api/runs/{run_id}/transcript?after={after}"))
            .await
    }

    /// `PATCH /api/lines/{id}`.
    ///
    /// # Errors
    /// As [`Client::health`].
    pub async fn set_priority(&self, id: &str, priority: i32) -> Result<Line, ClientError> {
        self.send(
            self.req(reqwest::Method::PATCH, &format!("/api/lines/{id}"))
                .json(&LinePatch { priority }),
        )
        .await
    }

    /// `PUT /api/lines/order`: the queued lines `ids` start in this order, first first; the
    /// answer is those lines, in that order, with their new priorities.
    ///
    /// # Errors
    /// As [`Client::health`]; `duplicate_line` (an id listed twice), `unknown_line` (an id no
    /// line has), `invalid_state` (a line that is not queued), `bad_request` (no ids, or more than
    /// [`ORDER_MAX_LINES`]).
    pub async fn reorder(&self, ids: &[String]) -> Result<Vec<Line>, ClientError> {
        self.send(
            self.req(reqwest::Method::PUT, "/api/lines/order")
                .json(&LineOrder {
                    line_ids: ids.to_vec(),
                }),
        )
        .await
    }

    /// `POST /api/lines/{id}/accept`.
    ///
    /// # Errors
    /// As [`Client::health`]; `unmerged_commits` when the branch holds work main lacks.
    pub async fn accept(&self, id: &str) -> Result<Line, ClientError> {
        self.post(&format!("/api/lines/{id}/accept"), &serde_json::json!({}))
            .await
    }

    /// `POST /api/lines/{id}/remarks`.
    ///
    /// # Errors
    /// As [`Client::health`].
    pub async fn remarks(&self, id: &str, text: &str) -> Result<Line, ClientError> {
        self.post(
            &format!("/api/lines/{id}/remarks"),
            &Remarks { text: text.into() },
        )
        .await
    }

    /// `GET /api/decisions?project=&limit=`: the decisions taken without Anton, newest first
    /// (of one project, or of all; at most `limit`, the daemon's 200 when absent).
    ///
    /// # Errors
    /// As [`Client::health`]; `bad_request` when `limit` is out of 1–1000.
    pub async fn decisions(
        &self,
        project: Option<&str>,
        limit: Option<u32>,
    ) -> Result<Vec<Decision>, ClientError> {
        let mut q = Vec::new();
        if let Some(p) = project {
            q.push(("project", p.to_string()));
        }
        if let Some(l) = limit {
            q.push(("limit", l.to_string()));
        }
        self.send(self.req(reqwest::Method::GET, "/api/decisions").query(&q))
            .await
    }

    /// `POST /api/lines/{id}/level`: raises the line's level.
    ///
    /// # Errors
    /// As [`Client::health`]; `level_lower` when `level` is below the line's.
    pub async fn raise_level(&self, id: &str, level: Level) -> Result<Line, ClientError> {
        self.post(&format!("/api/lines/{id}/level"), &SetLevel { level })
            .await
    }

    /// `POST /api/lines/{id}/cancel`.
    ///
    /// # Errors
    /// As [`Client::health`].
    pub async fn cancel(&self, id: &str) -> Result<Line, ClientError> {
        self.post(&format!("/api/lines/{id}/cancel"), &serde_json::json!({}))
            .await
    }

    /// `GET /api/review`.
    ///
    /// # Errors
    /// As [`Client::health`].
    pub async fn review(&self) -> Result<Review, ClientError> {
        self.get("/api/review").await
    }

    /// `GET /api/preflight`: the checks run again now (the agent, its login, git, the data
    /// folder, each project), and what blocks.
    ///
    /// # Errors
    /// As [`Client::health`].
    pub async fn preflight(&self) -> Result<Preflight, ClientError> {
        self.get("/api/preflight").await
    }

    /// `GET /api/outbox`: whether the Catcher and PlanFix are configured, and their messages.
    ///
    /// # Errors
    /// As [`Client::health`].
    pub async fn outbox(&self) -> Result<Outbox, ClientError> {
        self.get("/api/outbox").await
    }

    /// `POST /api/outbox/test`: a test message to the Catcher, sent even at night (409
    /// `catcher_off` without one).
    ///
    /// # Errors
    /// As [`Client::health`].
    pub async fn outbox_test(&self) -> Result<OutboxItem, ClientError> {
        self.post("/api/outbox/test", &serde_json::json!({})).await
    }

    /// `POST /api/questions/{id}/answer`.
    ///
    /// # Errors
    /// As [`Client::health`].
    pub async fn answer(&self, id: &str, a: &Answer) -> Result<Question, ClientError> {
        self.post(&format!("/api/questions/{id}/answer"), a).await
    }

    /// `DELETE /api/questions/{id}/answer`: takes the answer back while its `answer` step has
    /// not started (409 `answer_started` after); the question is as before the answer.
    ///
    /// # Errors
    /// As [`Client::health`].
    pub async fn take_back(&self, id: &str) -> Result<Question, ClientError> {
        self.send(self.req(
            reqwest::Method::DELETE,
            &format!("/api/questions/{id}/answer"),
        ))
        .await
    }

    /// `GET /api/budget`.
    ///
    /// # Errors
    /// As [`Client::health`].
    pub async fn budget(&self) -> Result<Budget, ClientError> {
        self.get("/api/budget").await
    }

    /// `GET /api/events`: the server-sent events as they come.
    ///
    /// # Errors
    /// As [`Client::health`], for the opening request.
    pub async fn events(&self) -> Result<EventStream, ClientError> {
        let resp = self.req(reqwest::Method::GET, "/api/events").send().await?;
        let status = resp.status();
        if !status.is_success() {
            let bytes = resp.bytes().await?;
            let body: Option<ApiErrorBody> = serde_json::from_slice(&bytes).ok();
            return Err(ClientError::Api {
                status: status.as_u16(),
                code: body.as_ref().map(|b| b.code),
                message: body.map_or_else(String::new, |b| b.message),
            });
        }
        Ok(EventStream {
            inner: Box::pin(resp.bytes_stream().map(|r| r.map(|b| b.to_vec()))),
            buf: Vec::new(),
        })
    }
}

type ByteStream =
    std::pin::Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<Vec<u8>>> + Send>>;

/// The events of `GET /api/events`, decoded.
pub struct EventStream {
    inner: ByteStream,
    buf: Vec<u8>,
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream").finish_non_exhaustive()
    }
}

impl EventStream {
    /// The next event; `None` when the daemon closed the stream.
    ///
    /// # Errors
    /// A transport error, or an event whose data is not an [`Event`].
    pub async fn next(&mut self) -> Option<Result<Event, ClientError>> {
        loop {
            if let Some(end) = find_blank_line(&self.buf) {
                let frame: Vec<u8> = self.buf.drain(..end.1).collect();
                let text = String::from_utf8_lossy(&frame[..end.0]).into_owned();
                let data: String = text
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(|d| d.trim_start())
                    .collect::<Vec<_>>()
                    .join("\n");
                if data.is_empty() {
                    continue;
                }
                return Some(
                    serde_json::from_str(&data).map_err(|source| ClientError::Decode {
                        url: "/api/events".into(),
                        source,
                    }),
                );
            }
            match self.inner.next().await? {
                Ok(chunk) => self.buf.extend_from_slice(&chunk),
                Err(e) => return Some(Err(e.into())),
            }
        }
    }
}

/// Finds the end of the first SSE frame: (end of its text, end including the blank line).
fn find_blank_line(buf: &[u8]) -> Option<(usize, usize)> {
    for i in 0..buf.len() {
        if buf[i..].starts_with(b"\n\n") {
            return Some((i, i + 2));
        }
        if buf[i..].starts_with(b"\r\n\r\n") {
            return Some((i, i + 4));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_frames_split_on_blank_lines() {
        assert_eq!(find_blank_line(b"data: 1\n\ndata: 2"), Some((7, 9)));
        assert_eq!(find_blank_line(b"data: 1\r\n\r\n"), Some((7, 11)));
        assert_eq!(find_blank_line(b"data: 1\n"), None);
    }
}
