//! Prints a generated case (`cargo run -p stgflow-tests --example peek -- SEED`), or with
//! `stats`, how many facts the reference derives beyond the input over 300 seeds.
fn main() {
    let arg = std::env::args().nth(1).unwrap_or_default();
    if arg == "stats" {
        let (mut derived, mut nonempty) = (0, 0);
        for seed in 0..300 {
            let case = stgflow_tests::generate::case(seed);
            let input: std::collections::BTreeSet<String> =
                case.stream.lines().map(|l| l.replace(' ', "")).collect();
            let out = stgflow_tests::run_reference(&case.program, &case.stream, Default::default())
                .unwrap_or_default();
            let extra = out.difference(&input).count();
            derived += extra;
            nonempty += usize::from(extra > 0);
        }
        println!(
            "derived facts beyond input: {derived} total, {nonempty}/300 cases derive something"
        );
        return;
    }
    let seed: u64 = arg.parse().unwrap_or(1);
    let case = stgflow_tests::generate::case(seed);
    println!("{}\n{}", case.program, case.stream);
    let n = stgflow_tests::naive::naive(&case.program, &case.stream);
    let r = stgflow_tests::run_reference(&case.program, &case.stream, Default::default());
    println!("naive:     {n:?}\nreference: {r:?}");
}
