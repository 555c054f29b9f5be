//! A WASI command component (it exports `wasi:cli/run`): valid WebAssembly, wrong world.

fn main() {
    println!("I am not a Turnpike plugin");
}
