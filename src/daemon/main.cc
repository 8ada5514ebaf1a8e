// trainyardd: placeholder until the daemon wiring lands (issue #2, in progress).
int main() { return 0; }
