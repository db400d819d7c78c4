# A rule written as for conftest: package main, results that are plain messages about no
# particular object. Its rule ID is the package's name, "main".
package main

deny contains msg if {
	some app in input.apps
	count(app.objects) == 0
	msg := sprintf("app %q renders no objects", [app.name])
}
