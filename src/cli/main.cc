// trainyard CLI: placeholder until the CLI lands (issue #2, in progress).
int main() { return 0; }
