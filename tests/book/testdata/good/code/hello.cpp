// Included by actors.md: whole, and one anchored part.
#include <iostream>

// ANCHOR: greet
void greet() { std::cout << "hello\n"; }
// ANCHOR_END: greet

int main() { greet(); }
