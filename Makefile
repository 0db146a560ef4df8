# Convenience wrappers; dev.py does the work and needs only Python 3.11+.
.PHONY: run test
run:
	python3 dev.py run
test:
	python3 dev.py test
