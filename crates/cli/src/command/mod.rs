//! One module per subcommand: its arguments and its `run`.

pub mod adjudicate;
pub mod generate;
pub mod info;
pub mod line;
pub mod plan;
pub mod probe;
pub mod serve;
pub mod verify;
