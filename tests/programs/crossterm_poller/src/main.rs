//! A TUI of the class issue 48 names: its input thread never blocks in a read. It calls crossterm's
//! `event::poll(Duration::ZERO)` (an `epoll_wait` with a timeout of 0 on a set that holds the terminal) BURST times in a
//! row, then sleeps NAP, and again; its main thread waits for the key on a channel (a futex).
//!
//! `crossterm_poller ask`: a dialog; the key pressed goes to out.txt. `crossterm_poller work`: the same loop, with
//! WORK of computing in each round (a program at work that checks for keys between its chunks: busy).
//! `crossterm_poller clock`: the dialog with a clock on its top row redrawn every second.
//! drawn.txt gets CLOCK_MONOTONIC when the dialog is drawn.

use std::io::{stdout, Write};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use crossterm::event::{self, Event, KeyCode};
use crossterm::{cursor, execute, terminal};

const BURST: usize = 35;
const NAP: Duration = Duration::from_millis(30);
const WORK: Duration = Duration::from_millis(25);

fn monotonic() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

fn spin(how_long: Duration) -> u64 {
    let start = Instant::now();
    let mut n: u64 = 0;
    while start.elapsed() < how_long {
        n = n.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    }
    n
}

fn main() -> std::io::Result<()> {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "ask".into());
    let mut out = stdout();
    terminal::enable_raw_mode()?;
    execute!(out, terminal::EnterAlternateScreen, cursor::Hide, terminal::Clear(terminal::ClearType::All))?;
    write!(out, "\x1b[3;5HDeploy the build to production? [y/n]")?;
    out.flush()?;
    std::fs::write("drawn.txt", format!("{}", monotonic()))?;

    let (tx, rx) = mpsc::channel::<char>();
    let work = mode == "work";
    thread::spawn(move || loop {
        for _ in 0..BURST {
            if event::poll(Duration::ZERO).unwrap_or(false) {
                if let Ok(Event::Key(key)) = event::read() {
                    if let KeyCode::Char(c) = key.code {
                        let _ = tx.send(c);
                        return;
                    }
                }
            }
        }
        if work {
            std::hint::black_box(spin(WORK));
        }
        thread::sleep(NAP);
    });

    let started = Instant::now();
    let key = loop {
        if mode == "clock" {
            let t = started.elapsed().as_secs();
            write!(out, "\x1b7\x1b[1;1H  uptime {:02}:{:02}:{:02}\x1b8", t / 3600, t / 60 % 60, t % 60)?;
            out.flush()?;
        }
        match rx.recv_timeout(Duration::from_secs(1)) {
            Ok(c) => break c,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break '?',
        }
    };
    execute!(out, cursor::Show, terminal::LeaveAlternateScreen)?;
    terminal::disable_raw_mode()?;
    std::fs::write("out.txt", key.to_string())?;
    Ok(())
}
