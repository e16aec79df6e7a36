//! The connection itself: one client at a time, set up from the saved settings (starting the
//! embedded daemon when that is the mode), its status kept true and sent to the page, and the
//! daemon's events forwarded while it lasts.

use std::sync::{Mutex, RwLock};
use std::time::Duration;

use conveyor_api::Client;
use tauri::{AppHandle, Emitter, Runtime};

use super::check::{check, describe, state_of};
use super::embedded;
use super::saved::{ConveyorPaths, Saved};
use super::token::Tokens;
use super::types::{
    ConnectRequest, ConnectionMode, ConnectionState, ConnectionStatus, ConnectionView,
};
use crate::error::{AppError, ErrorCode};
use crate::sync::lock;

/// The page's event with every daemon event.
pub const EVENT: &str = "conveyor-event";
/// The page's event with the connection's status.
pub const STATUS: &str = "conveyor-status";
/// Tells the page to reload everything: the event stream was down, events may be lost.
pub const RESYNC: &str = "conveyor-resync";

/// The connection. Calls take a clone of the client, so a slow call never holds a lock.
#[derive(Debug)]
pub struct Conveyor {
    pub paths: ConveyorPaths,
    pub tokens: Tokens,
    client: RwLock<Option<Client>>,
    status: Mutex<ConnectionStatus>,
    /// One connection change at a time; holds the embedded daemon and the events task.
    inner: tokio::sync::Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    embedded: Option<conveyor::ServerHandle>,
    events: Option<tauri::async_runtime::JoinHandle<()>>,
}

impl Conveyor {
    pub fn new(paths: ConveyorPaths, tokens: Tokens) -> Conveyor {
        Conveyor {
            paths,
            tokens,
            client: RwLock::new(None),
            status: Mutex::new(ConnectionStatus {
                mode: ConnectionMode::Embedded,
                url: None,
                state: ConnectionState::Starting,
                message: None,
                daemon_version: None,
            }),
            inner: tokio::sync::Mutex::new(Inner::default()),
        }
    }

    /// The client, when a daemon is set up.
    ///
    /// # Errors
    /// `not_connected` before that.
    pub fn client(&self) -> Result<Client, AppError> {
        self.client
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
            .ok_or_else(|| {
                let s = self.status();
                AppError::new(
                    ErrorCode::NotConnected,
                    s.message
                        .unwrap_or_else(|| "the conveyor daemon is not connected yet".into()),
                )
            })
    }

    pub fn status(&self) -> ConnectionStatus {
        lock(&self.status).clone()
    }

    /// The settings as the page shows them.
    ///
    /// # Errors
    /// When `conveyor.json` is broken.
    pub fn view(&self) -> Result<ConnectionView, AppError> {
        let saved = Saved::load(&self.paths.settings)?;
        let token = self.tokens.load();
        Ok(ConnectionView {
            mode: saved.mode,
            url: saved.url,
            token_set: token.is_some(),
            token_store: token.map(|(_, s)| s),
            embedded_config: self.paths.embedded_config.display().to_string(),
            embedded_data: self.paths.embedded_data.display().to_string(),
        })
    }

    fn set_status<R: Runtime>(&self, app: &AppHandle<R>, s: ConnectionStatus) {
        let changed = {
            let mut cur = lock(&self.status);
            let changed = *cur != s;
            *cur = s.clone();
            changed
        };
        if changed {
            tracing::info!(state = ?s.state, url = ?s.url, detail = ?s.message, "conveyor connection");
            let _ = app.emit(STATUS, s);
        }
    }

    /// Connects as `conveyor.json` says (at start-up).
    pub async fn start<R: Runtime>(&self, app: &AppHandle<R>) {
        let saved = match Saved::load(&self.paths.settings) {
            Ok(s) => s,
            Err(e) => {
                self.set_status(
                    app,
                    ConnectionStatus {
                        mode: ConnectionMode::Embedded,
                        url: None,
                        state: ConnectionState::Failed,
                        message: Some(e.message),
                        daemon_version: None,
                    },
                );
                return;
            }
        };
        self.setup(app, &saved).await;
    }

    /// Saves new settings (and token) and connects with them.
    ///
    /// # Errors
    /// `config_invalid` (field `url` or `token`) when a remote daemon lacks either.
    pub async fn connect<R: Runtime>(
        &self,
        app: &AppHandle<R>,
        req: ConnectRequest,
    ) -> Result<ConnectionStatus, AppError> {
        let url = req.url.map(|u| u.trim().trim_end_matches('/').to_string());
        let url = url.filter(|u| !u.is_empty());
        if req.mode == ConnectionMode::Remote {
            let Some(u) = &url else {
                return Err(AppError::invalid(
                    "url",
                    "the remote daemon's URL is required",
                ));
            };
            if !(u.starts_with("http://") || u.starts_with("https://")) {
                return Err(AppError::invalid(
                    "url",
                    format!("{u}: the URL must start with http:// or https://"),
                ));
            }
            match req.token.as_deref().map(str::trim) {
                Some(t) if !t.is_empty() => {
                    self.tokens.save(t)?;
                }
                _ if self.tokens.load().is_none() => {
                    return Err(AppError::invalid(
                        "token",
                        "the remote daemon's token is required",
                    ));
                }
                _ => {}
            }
        }
        let saved = Saved {
            mode: req.mode,
            url: url.or_else(|| Saved::load(&self.paths.settings).ok().and_then(|s| s.url)),
        };
        saved.save(&self.paths.settings)?;
        self.setup(app, &saved).await;
        Ok(self.status())
    }

    /// Tears down the current connection and sets up the one `saved` describes.
    async fn setup<R: Runtime>(&self, app: &AppHandle<R>, saved: &Saved) {
        let mut inner = self.inner.lock().await;
        if let Some(t) = inner.events.take() {
            t.abort();
        }
        *self
            .client
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        let starting = |url: Option<String>| ConnectionStatus {
            mode: saved.mode,
            url,
            state: ConnectionState::Starting,
            message: None,
            daemon_version: None,
        };
        let client = match saved.mode {
            ConnectionMode::Remote => {
                if let Some(h) = inner.embedded.take() {
                    h.stop().await;
                }
                self.set_status(app, starting(saved.url.clone()));
                let (Some(url), Some((token, _))) = (saved.url.clone(), self.tokens.load()) else {
                    self.set_status(
                        app,
                        ConnectionStatus {
                            state: ConnectionState::Failed,
                            message: Some("the remote daemon needs a URL and a token".into()),
                            ..starting(saved.url.clone())
                        },
                    );
                    return;
                };
                Client::new(url, Some(token))
            }
            ConnectionMode::Embedded => {
                if inner.embedded.is_none() {
                    self.set_status(app, starting(None));
                    match embedded::start(&self.paths).await {
                        Ok(h) => inner.embedded = Some(h),
                        Err(e) => {
                            self.set_status(
                                app,
                                ConnectionStatus {
                                    state: ConnectionState::Failed,
                                    message: Some(format!("{e:#}")),
                                    ..starting(None)
                                },
                            );
                            return;
                        }
                    }
                }
                let h = inner.embedded.as_ref().expect("started above");
                let token = h.shared().token().to_string();
                Client::new(format!("http://{}", h.addr), Some(token))
            }
        };
        *self
            .client
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(client.clone());
        let url = Some(client_url(saved, inner.embedded.as_ref()));
        let first = check(&client, saved.mode, url.clone()).await;
        self.set_status(app, first);
        let app2 = app.clone();
        let mode = saved.mode;
        inner.events = Some(tauri::async_runtime::spawn(async move {
            forward_events(app2, client, mode, url).await;
        }));
    }

    /// Stops the embedded daemon (its running agents too) and the events task.
    pub async fn shutdown(&self) {
        let mut inner = self.inner.lock().await;
        if let Some(t) = inner.events.take() {
            t.abort();
        }
        if let Some(h) = inner.embedded.take() {
            h.stop().await;
        }
    }
}

/// The daemon's base URL: the embedded one's loopback address, or the remote one's.
fn client_url(saved: &Saved, embedded: Option<&conveyor::ServerHandle>) -> String {
    match (saved.mode, embedded) {
        (ConnectionMode::Embedded, Some(h)) => format!("http://{}", h.addr),
        _ => saved.url.clone().unwrap_or_default(),
    }
}

/// Forwards the daemon's events to the page; reconnects with a growing pause when the stream
/// breaks, and keeps the status true meanwhile.
async fn forward_events<R: Runtime>(
    app: AppHandle<R>,
    client: Client,
    mode: ConnectionMode,
    url: Option<String>,
) {
    use tauri::Manager as _;
    let mut pause = Duration::from_millis(250);
    // The connection was just checked by `setup`: the first stream needs no second check.
    let mut reconnect = false;
    loop {
        let st = app.state::<Conveyor>();
        match client.events().await {
            Ok(mut stream) => {
                if reconnect {
                    let s = check(&client, mode, url.clone()).await;
                    let ok = s.state == ConnectionState::Connected;
                    st.set_status(&app, s);
                    if ok {
                        pause = Duration::from_millis(250);
                        // Events may have been missed while the stream was down.
                        let _ = app.emit(RESYNC, ());
                    }
                }
                while let Some(ev) = stream.next().await {
                    match ev {
                        Ok(ev) => {
                            let _ = app.emit(EVENT, ev);
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "conveyor event stream broke");
                            break;
                        }
                    }
                }
                st.set_status(&app, check(&client, mode, url.clone()).await);
            }
            Err(e) => st.set_status(
                &app,
                ConnectionStatus {
                    mode,
                    url: url.clone(),
                    state: state_of(&e),
                    message: Some(describe(&e, url.as_deref())),
                    daemon_version: None,
                },
            ),
        }
        // Waiting to reconnect (not a test's sleep): the daemon is down or restarting.
        reconnect = true;
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(10));
    }
}
