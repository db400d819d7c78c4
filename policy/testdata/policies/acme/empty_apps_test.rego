package main_test

import data.main

test_app_without_objects_is_denied if {
	main.deny == {`app "empty" renders no objects`} with input as {"apps": [
		{"name": "empty", "objects": []},
		{"name": "full", "objects": [{"object": {"kind": "ConfigMap"}}]},
	]}
}
